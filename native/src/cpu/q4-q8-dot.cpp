#include "cpu/q4-q8-dot.h"

#include <cmath>
#include <cstdlib>
#include <string_view>

#include "quant/qpacked.h"

#if (defined(__GNUC__) || defined(__clang__)) && (defined(__x86_64__) || defined(__i386__))
#define RT_Q8_X86 1
#define RT_T_AVX2 __attribute__((target("avx2,fma,f16c")))
#define RT_T_AVXVNNI __attribute__((target("avx2,fma,f16c,avxvnni")))
#define RT_T_AVX512VNNI __attribute__((target("avx2,fma,f16c,avx512f,avx512bw,avx512vl,avx512dq,avx512vnni")))
#include "cpu/x86-intrinsics.h"
#endif

namespace rt {

namespace {

#ifdef RT_Q8_X86
bool supported(cpu_isa isa) {
  __builtin_cpu_init();
  const bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && __builtin_cpu_supports("f16c");
  switch (isa) {
    case cpu_isa::scalar: return true;
    case cpu_isa::avx2: return avx2;
    case cpu_isa::avx_vnni: return avx2 && __builtin_cpu_supports("avxvnni");
    case cpu_isa::avx512_vnni:
      return avx2 && __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vnni");
  }
  return false;
}
#else
bool supported(cpu_isa isa) { return isa == cpu_isa::scalar; }
#endif

cpu_isa best() {
  for (cpu_isa isa : {cpu_isa::avx512_vnni, cpu_isa::avx_vnni, cpu_isa::avx2})
    if (supported(isa)) return isa;
  return cpu_isa::scalar;
}

// HORIZON_CPU_ISA=scalar|avx2|avx-vnni|avx512-vnni caps the path (benchmarks compare them in one binary).
cpu_isa initial() {
  const cpu_isa b = best();
  const char * env = std::getenv("HORIZON_CPU_ISA");
  if (!env) return b;
  for (cpu_isa isa : {cpu_isa::scalar, cpu_isa::avx2, cpu_isa::avx_vnni, cpu_isa::avx512_vnni})
    if (std::string_view(env) == cpu_isa_name(isa) && supported(isa)) return isa;
  return b;
}

cpu_isa g_isa = initial();

void scalar_dot(const uint8_t * qrow, const uint16_t * srow, int cols, const q8_rows & a, int n, float * y, int64_t ldy) {
  const int nb = cols / kQ8Block;
  for (int t = 0; t < n; ++t) {
    const int8_t * qt = a.q + t * a.ld;
    const float * dt = a.d + t * (a.ld / kQ8Block);
    float acc = 0.0f;
    for (int b = 0; b < nb; ++b) {
      const uint8_t * w = qrow + b * 16;
      const int8_t * x = qt + b * kQ8Block;
      int32_t s = 0;
      for (int j = 0; j < 16; ++j) s += kHq4Codebook[w[j] & 0xF] * x[j] + kHq4Codebook[w[j] >> 4] * x[16 + j];
      acc += static_cast<float>(s) * (f32_from_fp16(srow[b]) * dt[b]);
    }
    y[t * ldy] = acc;
  }
}

#ifdef RT_Q8_X86

// |K| of each level, the unsigned operand of the sign trick.
struct abs_levels {
  alignas(16) int8_t v[16];
};
constexpr abs_levels make_abs_levels() {
  abs_levels a{};
  for (int i = 0; i < 16; ++i) a.v[i] = static_cast<int8_t>(kHq4Codebook[i] < 0 ? -kHq4Codebook[i] : kHq4Codebook[i]);
  return a;
}
constexpr abs_levels kAbsLevels = make_abs_levels();

// Levels shifted to unsigned, K + 128 (the codebook spans [-127, 109]): dpbusd (which, unlike maddubs, cannot
// saturate) takes its unsigned operand from the weights, so the VNNI paths need no sign step; the shift adds
// 128 * sum(q) to each block's integer sum, taken back once per block (the pair kernels in their integer sums, the
// tiled ones in float, from the quantiser's block sums).
struct offset_levels {
  alignas(16) uint8_t v[16];
};
constexpr offset_levels make_offset_levels() {
  offset_levels a{};
  for (int i = 0; i < 16; ++i) a.v[i] = static_cast<uint8_t>(kHq4Codebook[i] + 128);
  return a;
}
constexpr offset_levels kOffsetLevels = make_offset_levels();

// Block B of the row into every token's accumulator (the body the kernels below unroll). The nibbles of a block
// are read once into both 128-bit halves and shifted per half (low nibbles = even columns, high = odd ones), and
// the two scales' product comes from comb[t][B % 8], filled for eight blocks at a time. SHIFTED: levels + 128 against
// the activations as they are; otherwise |K| against the activations carrying K's sign.
#define RT_Q4Q8_BLOCK(DOT, SHIFTED, B)                                                                                  \
  do {                                                                                                                 \
    const int b_ = (B);                                                                                                \
    const __m256i both = _mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i *>(qrow + b_ * 16))); \
    const __m256i idx = _mm256_and_si256(_mm256_srlv_epi32(both, nibble_shift), low4);                                \
    const __m256i wl = _mm256_shuffle_epi8(levels, idx);                                                               \
    [[maybe_unused]] __m256i wa;                                                                                       \
    if constexpr (!(SHIFTED)) wa = _mm256_shuffle_epi8(mags, idx);                                                     \
    for (int t = 0; t < NT; ++t) {                                                                                     \
      const __m256i x = _mm256_loadu_si256(reinterpret_cast<const __m256i *>(aq + t * ldq + b_ * kQ8Block));          \
      __m256i s;                                                                                                       \
      if constexpr (SHIFTED) s = DOT(wl, x);                                                                           \
      else s = DOT(wa, _mm256_sign_epi8(x, wl));                                                                       \
      acc[t] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(s), _mm256_broadcast_ss(&comb[t][b_ & 7]), acc[t]);                  \
    }                                                                                                                  \
  } while (0)

// Rows ahead that the kernels fetch by hand.
constexpr int kRowsAhead = 2;

// The tiled kernels, for rows the pair kernels below do not take (a block count that is not a multiple of 8, or over
// kPairLayoutBlocks): one body for the three x86 paths; DOT(a, b) sums the 4-byte groups of unsigned a times signed b
// into int32 lanes. NT tokens share one unpack of each weight block; each token has one accumulator, so that its
// result does not depend on how many tokens share the call (a batch gives every token the bits it gets alone). A
// SHIFTED kernel takes each block's 128 * sum(q) * scales back with one multiply-add per token and eight blocks (the
// lanes are summed at the end, so the eight blocks' terms may share a vector).
#define RT_Q4Q8_KERNEL(NAME, TARGET, DOT, SHIFTED)                                                                     \
  template <int NT>                                                                                                    \
  TARGET void NAME(const uint8_t * qrow, const uint16_t * srow, int nb, const q8_rows & a, float * y, int64_t ldy) {   \
    const __m256i levels = _mm256_broadcastsi128_si256(                                                                \
        _mm_loadu_si128(reinterpret_cast<const __m128i *>((SHIFTED) ? static_cast<const void *>(kOffsetLevels.v)      \
                                                                    : static_cast<const void *>(kHq4Codebook))));     \
    [[maybe_unused]] const __m256i mags =                                                                              \
        _mm256_broadcastsi128_si256(_mm_load_si128(reinterpret_cast<const __m128i *>(kAbsLevels.v)));                  \
    const __m256i low4 = _mm256_set1_epi8(0x0F);                                                                       \
    const __m256i nibble_shift = _mm256_setr_epi32(0, 0, 0, 0, 4, 4, 4, 4);                                            \
    const int8_t * const aq = a.q;                                                                                     \
    const float * const ad = a.d;                                                                                      \
    const float * const asum = a.sum;                                                                                  \
    const int64_t ldq = a.ld, ldd = a.ld / kQ8Block;                                                                   \
    alignas(32) float comb[NT][8];                                                                                     \
    float tail[NT] = {};                                                                                               \
    __m256 acc[NT];                                                                                                    \
    for (int t = 0; t < NT; ++t) acc[t] = _mm256_setzero_ps();                                                         \
    _mm_prefetch(reinterpret_cast<const char *>(srow + kRowsAhead * nb), _MM_HINT_T0);                                 \
    _mm_prefetch(reinterpret_cast<const char *>(srow + kRowsAhead * nb) + 64, _MM_HINT_T0);                            \
    for (int g = 0; g < nb; g += 8) {                                                                                  \
      const int ge = nb - g < 8 ? nb : g + 8;                                                                          \
      _mm_prefetch(reinterpret_cast<const char *>(qrow + kRowsAhead * nb * 16 + g * 16), _MM_HINT_T0);                 \
      _mm_prefetch(reinterpret_cast<const char *>(qrow + kRowsAhead * nb * 16 + g * 16 + 64), _MM_HINT_T0);            \
      if (ge - g == 8) {                                                                                               \
        const __m256 sw = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i *>(srow + g)));              \
        for (int t = 0; t < NT; ++t) {                                                                                 \
          const __m256 c = _mm256_mul_ps(sw, _mm256_loadu_ps(ad + t * ldd + g));                                     \
          _mm256_store_ps(comb[t], c);                                                                                 \
          if constexpr (SHIFTED)                                                                                       \
            acc[t] = _mm256_fnmadd_ps(_mm256_mul_ps(_mm256_loadu_ps(asum + t * ldd + g), _mm256_set1_ps(128.0f)), c, acc[t]); \
        }                                                                                                              \
      } else {                                                                                                         \
        for (int t = 0; t < NT; ++t)                                                                                   \
          for (int k = g; k < ge; ++k) {                                                                               \
            comb[t][k & 7] = _cvtsh_ss(srow[k]) * ad[t * ldd + k];                                                   \
            if constexpr (SHIFTED) tail[t] -= 128.0f * asum[t * ldd + k] * comb[t][k & 7];                            \
          }                                                                                                            \
      }                                                                                                                \
      if (ge - g == 8) {                                                                                               \
        _Pragma("GCC unroll 8") for (int k = 0; k < 8; ++k) RT_Q4Q8_BLOCK(DOT, SHIFTED, g + k);                         \
        continue;                                                                                                      \
      }                                                                                                                \
      for (int b = g; b < ge; ++b) RT_Q4Q8_BLOCK(DOT, SHIFTED, b);                                                     \
    }                                                                                                                  \
    for (int t = 0; t < NT; ++t) {                                                                                     \
      __m128 v = _mm_add_ps(_mm256_castps256_ps128(acc[t]), _mm256_extractf128_ps(acc[t], 1));                         \
      v = _mm_add_ps(v, _mm_movehl_ps(v, v));                                                                          \
      v = _mm_add_ss(v, _mm_shuffle_ps(v, v, 1));                                                                      \
      y[t * ldy] = _mm_cvtss_f32(v) + tail[t];                                                                         \
    }                                                                                                                  \
  }

RT_T_AVX2 inline __m256i dot_maddubs(__m256i a, __m256i b) { return _mm256_madd_epi16(_mm256_maddubs_epi16(a, b), _mm256_set1_epi16(1)); }
RT_T_AVXVNNI inline __m256i dot_avxvnni(__m256i a, __m256i b) { return _mm256_dpbusd_avx_epi32(_mm256_setzero_si256(), a, b); }
RT_T_AVX512VNNI inline __m256i dot_avx512vnni(__m256i a, __m256i b) { return _mm256_dpbusd_epi32(_mm256_setzero_si256(), a, b); }

// Tokens the pair kernels take a call, and the blocks their layout of them holds on the stack (24 KB), shared by its
// tokens: one token's rows up to 16,384 columns, eight tokens' up to 2,048; rows of more columns take fewer tokens a
// call.
constexpr int kPairMaxTokens = 8;
constexpr int kPairLayoutBlocks = 512;
// Whether the pair kernels take rows of nb blocks.
constexpr bool pair_fits(int nb) { return nb % 8 == 0 && nb <= kPairLayoutBlocks; }

// One to eight tokens on 256-bit vectors, two blocks a step. Each token is laid out once a call so that one load of two
// blocks' nibbles, masked and shifted, meets it: lanes 0-3 then sum block b and 4-7 block b + 1; the two blocks' scale
// products are picked out of a vector of eight, laid out even blocks | odd blocks, by an in-lane permute (vpermilps
// with an immediate; the cross-lane vpermps it replaced is two µops on Zen 3's busiest pipe: AVX2 there went from 29.7
// / 36.1 / 37.3 / 39.1 to 30.4 / 37.7 / 41.4 / 47.9 G at 1 / 2 / 3 / 8 tokens, with the same bits), so one conversion
// and one FMA a token take two blocks where the tiles above spend one of each a block (one thread, rows in L2, 1 / 2 /
// 3 / 8 tokens: AVX-512 VNNI 56 / 41 / 50 / 59 G there, 56 / 77 / 86 / 90 G here; AVX2 29 / 36 / 42 / 45 G there, 36 /
// 44 / 47 / 52 G here; eight tokens a call beat two calls of four on AVX2's 16 registers too, 52 against 49 G). SHIFTED
// (VNNI): levels + 128 into dpbusd, each lane starting at -128 times its activation bytes, so its integer sum is
// exactly sum K[u] * x. Otherwise (AVX2) the sign trick: |K| against the activations carrying K's sign, maddubs then
// madd. With one token, 10 instructions a step on AVX-512 VNNI, against 8 of a 512-bit version that cost 16 where
// 512-bit work is split in two (29.9 -> 42.9 -> 57.5 G in bench-cpu-kernels). Each token has one accumulator and the
// same instructions whatever NT is, so a token's result does not depend on the tokens beside it (one accumulator
// against two alternating: the same 55-56 G for one token). Rows two ahead are fetched by hand (single-thread streaming
// from memory 15 -> 19 GB/s).
#define RT_PAIR_KERNEL(NAME, TARGET, DPBUSD, SHIFTED)                                                                  \
  template <int NT>                                                                                                    \
  TARGET void NAME(const uint8_t * qrow, const uint16_t * srow, int nb, int64_t rows, const q8_rows & a, float * y,   \
                   int64_t ldy) {                                                                                      \
    static_assert(NT >= 1 && NT <= kPairMaxTokens, "tokens a call");                                                   \
    constexpr int kPairs = kPairLayoutBlocks / NT / 2;                                                                 \
    const __m256i levels = _mm256_broadcastsi128_si256(                                                                \
        _mm_loadu_si128(reinterpret_cast<const __m128i *>((SHIFTED) ? static_cast<const void *>(kOffsetLevels.v)      \
                                                                    : static_cast<const void *>(kHq4Codebook))));     \
    [[maybe_unused]] const __m256i mags =                                                                              \
        _mm256_broadcastsi128_si256(_mm_load_si128(reinterpret_cast<const __m128i *>(kAbsLevels.v)));                  \
    [[maybe_unused]] const __m256i ones16 = _mm256_set1_epi16(1);                                                      \
    const __m256i low4 = _mm256_set1_epi8(0x0F);                                                                       \
    /* Per token and pair of blocks (b, b + 1): their even columns side by side, then their odd ones (the order a    \
       32-byte load of the two blocks' nibbles gives, masked and shifted); SHIFTED, lanes 0-3 / 4-7 starting at      \
       -128 * block b / b + 1's sum. */                                                                                \
    alignas(32) int8_t xe[NT][kPairs][32], xo[NT][kPairs][32];                                                         \
    alignas(32) int32_t corr[(SHIFTED) ? NT : 1][(SHIFTED) ? kPairs : 1][8];                                           \
    /* Per token and eight blocks, their activation scales even blocks first, then odd ones (evenodd). */              \
    alignas(32) float dx[NT][(2 * kPairs + 7) / 8 * 8];                                                                \
    const __m256i evenodd = _mm256_setr_epi32(0, 2, 4, 6, 1, 3, 5, 7);                                                 \
    const int64_t ldd = a.ld / kQ8Block;                                                                               \
    for (int t = 0; t < NT; ++t) {                                                                                     \
      for (int g = 0; g < nb; g += 8)                                                                                  \
        _mm256_store_ps(dx[t] + g, _mm256_permutevar8x32_ps(_mm256_loadu_ps(a.d + t * ldd + g), evenodd));            \
      const int8_t * q = a.q + t * a.ld;                                                                               \
      for (int k = 0; k < nb / 2; ++k) {                                                                               \
        const __m256i b0 = _mm256_loadu_si256(reinterpret_cast<const __m256i *>(q + k * 2 * kQ8Block));               \
        const __m256i b1 = _mm256_loadu_si256(reinterpret_cast<const __m256i *>(q + k * 2 * kQ8Block + kQ8Block));    \
        const __m256i e = _mm256_permute2x128_si256(b0, b1, 0x20), o = _mm256_permute2x128_si256(b0, b1, 0x31);       \
        _mm256_store_si256(reinterpret_cast<__m256i *>(xe[t][k]), e);                                                  \
        _mm256_store_si256(reinterpret_cast<__m256i *>(xo[t][k]), o);                                                  \
        if constexpr (SHIFTED) {                                                                                       \
          const __m256i m128 = _mm256_set1_epi8(static_cast<char>(0x80));                                              \
          const __m256i sum = DPBUSD(DPBUSD(_mm256_setzero_si256(), m128, e), m128, o);                                \
          _mm256_store_si256(reinterpret_cast<__m256i *>(corr[(SHIFTED) ? t : 0][(SHIFTED) ? k : 0]),                  \
                             _mm256_sub_epi32(_mm256_setzero_si256(), sum));                                           \
        }                                                                                                              \
      }                                                                                                                \
    }                                                                                                                  \
    for (int64_t r = 0; r < rows; ++r, qrow += nb * 16, srow += nb) {                                                  \
      __m256 acc[NT];                                                                                                  \
      for (int t = 0; t < NT; ++t) acc[t] = _mm256_setzero_ps();                                                       \
      _mm_prefetch(reinterpret_cast<const char *>(srow + kRowsAhead * nb), _MM_HINT_T0);                               \
      for (int g = 0; g < nb; g += 8) {                                                                                \
        _mm_prefetch(reinterpret_cast<const char *>(qrow + kRowsAhead * nb * 16 + g * 16), _MM_HINT_T0);               \
        _mm_prefetch(reinterpret_cast<const char *>(qrow + kRowsAhead * nb * 16 + g * 16 + 64), _MM_HINT_T0);          \
        const __m256 sw = _mm256_permutevar8x32_ps(                                                                    \
            _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i *>(srow + g))), evenodd);                   \
        alignas(32) float comb[NT][8];                                                                                 \
        for (int t = 0; t < NT; ++t) _mm256_store_ps(comb[t], _mm256_mul_ps(sw, _mm256_load_ps(dx[t] + g)));          \
        _Pragma("GCC unroll 4") for (int k = 0; k < 4; ++k) {                                                          \
          const int p = g / 2 + k;                                                                                     \
          const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i *>(qrow + p * 32));                      \
          const __m256i il = _mm256_and_si256(v, low4), ih = _mm256_and_si256(_mm256_srli_epi16(v, 4), low4);          \
          const __m256i wl = _mm256_shuffle_epi8(levels, il), wh = _mm256_shuffle_epi8(levels, ih);                    \
          [[maybe_unused]] __m256i ml, mh;                                                                             \
          if constexpr (!(SHIFTED)) {                                                                                  \
            ml = _mm256_shuffle_epi8(mags, il);                                                                        \
            mh = _mm256_shuffle_epi8(mags, ih);                                                                        \
          }                                                                                                            \
          _Pragma("GCC unroll 8") for (int t = 0; t < NT; ++t) {                                                       \
            const __m256i xl = _mm256_load_si256(reinterpret_cast<const __m256i *>(xe[t][p]));                        \
            const __m256i xh = _mm256_load_si256(reinterpret_cast<const __m256i *>(xo[t][p]));                        \
            __m256i s;                                                                                                 \
            if constexpr (SHIFTED) {                                                                                   \
              s = DPBUSD(_mm256_load_si256(reinterpret_cast<const __m256i *>(corr[(SHIFTED) ? t : 0][(SHIFTED) ? p : 0])), \
                         wl, xl);                                                                                      \
              s = DPBUSD(s, wh, xh);                                                                                   \
            } else {                                                                                                   \
              s = _mm256_add_epi32(_mm256_madd_epi16(_mm256_maddubs_epi16(ml, _mm256_sign_epi8(xl, wl)), ones16),     \
                                   _mm256_madd_epi16(_mm256_maddubs_epi16(mh, _mm256_sign_epi8(xh, wh)), ones16));    \
            }                                                                                                          \
            const __m256 c = _mm256_load_ps(comb[t]);                                                                  \
            const __m256 sc = k == 0 ? _mm256_permute_ps(c, 0x00) : k == 1 ? _mm256_permute_ps(c, 0x55)                \
                            : k == 2 ? _mm256_permute_ps(c, 0xAA) : _mm256_permute_ps(c, 0xFF);                        \
            acc[t] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(s), sc, acc[t]);                                               \
          }                                                                                                            \
        }                                                                                                              \
      }                                                                                                                \
      for (int t = 0; t < NT; ++t) {                                                                                   \
        __m128 v = _mm_add_ps(_mm256_castps256_ps128(acc[t]), _mm256_extractf128_ps(acc[t], 1));                       \
        v = _mm_add_ps(v, _mm_movehl_ps(v, v));                                                                        \
        v = _mm_add_ss(v, _mm_shuffle_ps(v, v, 1));                                                                    \
        y[t * ldy + r] = _mm_cvtss_f32(v);                                                                             \
      }                                                                                                                \
    }                                                                                                                  \
  }                                                                                                                    \
                                                                                                                       \
  /* n tokens over `rows` rows: as many tokens a call as the layout holds (pair_fits). */                              \
  TARGET void NAME##_n(const uint8_t * qrow, const uint16_t * srow, int nb, int64_t rows, const q8_rows & a, int n,    \
                       float * y, int64_t ldy) {                                                                       \
    const int most = std::min(kPairMaxTokens, kPairLayoutBlocks / nb);                                                 \
    for (int t = 0; t < n;) {                                                                                          \
      const int take = std::min(most, n - t);                                                                          \
      const q8_rows at = a.from(t);                                                                                    \
      float * yt = y + t * ldy;                                                                                        \
      switch (take) {                                                                                                  \
        case 1: NAME<1>(qrow, srow, nb, rows, at, yt, ldy); break;                                                     \
        case 2: NAME<2>(qrow, srow, nb, rows, at, yt, ldy); break;                                                     \
        case 3: NAME<3>(qrow, srow, nb, rows, at, yt, ldy); break;                                                     \
        case 4: NAME<4>(qrow, srow, nb, rows, at, yt, ldy); break;                                                     \
        case 5: NAME<5>(qrow, srow, nb, rows, at, yt, ldy); break;                                                     \
        case 6: NAME<6>(qrow, srow, nb, rows, at, yt, ldy); break;                                                     \
        case 7: NAME<7>(qrow, srow, nb, rows, at, yt, ldy); break;                                                     \
        default: NAME<8>(qrow, srow, nb, rows, at, yt, ldy); break;                                                    \
      }                                                                                                                \
      t += take;                                                                                                       \
    }                                                                                                                  \
  }

RT_T_AVX512VNNI inline __m256i dpbusd_avx512(__m256i acc, __m256i a, __m256i b) { return _mm256_dpbusd_epi32(acc, a, b); }
RT_T_AVXVNNI inline __m256i dpbusd_avxvnni(__m256i acc, __m256i a, __m256i b) { return _mm256_dpbusd_avx_epi32(acc, a, b); }
// AVX2 has no dpbusd: the sign-trick kernel's DPBUSD names this and never calls it.
RT_T_AVX2 inline __m256i dpbusd_none(__m256i acc, __m256i, __m256i) { return acc; }

RT_PAIR_KERNEL(pair_avx512vnni, RT_T_AVX512VNNI, dpbusd_avx512, true)
RT_PAIR_KERNEL(pair_avxvnni, RT_T_AVXVNNI, dpbusd_avxvnni, true)
RT_PAIR_KERNEL(pair_avx2, RT_T_AVX2, dpbusd_none, false)

RT_Q4Q8_KERNEL(kernel_avx2, RT_T_AVX2, dot_maddubs, false)
RT_Q4Q8_KERNEL(kernel_avxvnni, RT_T_AVXVNNI, dot_avxvnni, true)
RT_Q4Q8_KERNEL(kernel_avx512vnni, RT_T_AVX512VNNI, dot_avx512vnni, true)

// Tokens in tiles of 8, then one tile of the rest.
template <template <int> class K>
void tiles(const uint8_t * qrow, const uint16_t * srow, int nb, const q8_rows & a, int n, float * y, int64_t ldy) {
  for (int t = 0; t < n;) {
    const q8_rows at = a.from(t);
    switch (n - t < 8 ? n - t : 8) {
      case 8: K<8>::run(qrow, srow, nb, at, y + t * ldy, ldy); t += 8; break;
      case 7: K<7>::run(qrow, srow, nb, at, y + t * ldy, ldy); t += 7; break;
      case 6: K<6>::run(qrow, srow, nb, at, y + t * ldy, ldy); t += 6; break;
      case 5: K<5>::run(qrow, srow, nb, at, y + t * ldy, ldy); t += 5; break;
      case 4: K<4>::run(qrow, srow, nb, at, y + t * ldy, ldy); t += 4; break;
      case 3: K<3>::run(qrow, srow, nb, at, y + t * ldy, ldy); t += 3; break;
      case 2: K<2>::run(qrow, srow, nb, at, y + t * ldy, ldy); t += 2; break;
      default: K<1>::run(qrow, srow, nb, at, y + t * ldy, ldy); t += 1; break;
    }
  }
}

template <int NT> struct run_avx2 {
  static void run(const uint8_t * w, const uint16_t * s, int nb, const q8_rows & a, float * y, int64_t ldy) { kernel_avx2<NT>(w, s, nb, a, y, ldy); }
};
template <int NT> struct run_avxvnni {
  static void run(const uint8_t * w, const uint16_t * s, int nb, const q8_rows & a, float * y, int64_t ldy) { kernel_avxvnni<NT>(w, s, nb, a, y, ldy); }
};
template <int NT> struct run_avx512vnni {
  static void run(const uint8_t * w, const uint16_t * s, int nb, const q8_rows & a, float * y, int64_t ldy) {
    kernel_avx512vnni<NT>(w, s, nb, a, y, ldy);
  }
};

RT_T_AVX2 void quantize_avx2(const float * x, int n, int8_t * q, float * d, float * sum) {
  const __m256 sign = _mm256_set1_ps(-0.0f);
  for (int b = 0; b < n / kQ8Block; ++b) {
    const float * xb = x + b * kQ8Block;
    __m256 v[4];
    __m256 m = _mm256_setzero_ps();
    for (int i = 0; i < 4; ++i) {
      v[i] = _mm256_loadu_ps(xb + 8 * i);
      m = _mm256_max_ps(m, _mm256_andnot_ps(sign, v[i]));
    }
    __m128 h = _mm_max_ps(_mm256_castps256_ps128(m), _mm256_extractf128_ps(m, 1));
    h = _mm_max_ps(h, _mm_movehl_ps(h, h));
    h = _mm_max_ss(h, _mm_shuffle_ps(h, h, 1));
    const float amax = _mm_cvtss_f32(h);
    d[b] = amax / 127.0f;
    const __m256 inv = _mm256_set1_ps(amax > 0.0f ? 127.0f / amax : 0.0f);
    __m256i r[4];
    for (int i = 0; i < 4; ++i)
      r[i] = _mm256_cvtps_epi32(_mm256_round_ps(_mm256_mul_ps(v[i], inv), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
    const __m256i r4 = _mm256_add_epi32(_mm256_add_epi32(r[0], r[1]), _mm256_add_epi32(r[2], r[3]));
    __m128i h4 = _mm_add_epi32(_mm256_castsi256_si128(r4), _mm256_extracti128_si256(r4, 1));
    h4 = _mm_add_epi32(h4, _mm_shuffle_epi32(h4, 0x4E));
    h4 = _mm_add_epi32(h4, _mm_shuffle_epi32(h4, 0xB1));
    sum[b] = static_cast<float>(_mm_cvtsi128_si32(h4));
    // Columns 0..31 as int32 in r[0..3] (all within [-127, 127], so the packs do not saturate) to bytes in column
    // order (the packs interleave 128-bit lanes; a dword permute undoes it), then each lane's even columns before its
    // odd ones, then the two lanes' evens before their odds.
    const __m256i b8 = _mm256_packs_epi16(_mm256_packs_epi32(r[0], r[1]), _mm256_packs_epi32(r[2], r[3]));
    const __m256i cols = _mm256_permutevar8x32_epi32(b8, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
    const __m256i split = _mm256_shuffle_epi8(cols, _mm256_setr_epi8(0, 2, 4, 6, 8, 10, 12, 14, 1, 3, 5, 7, 9, 11, 13, 15,
                                                                    0, 2, 4, 6, 8, 10, 12, 14, 1, 3, 5, 7, 9, 11, 13, 15));
    _mm256_storeu_si256(reinterpret_cast<__m256i *>(q + b * kQ8Block), _mm256_permute4x64_epi64(split, 0xD8));
  }
}

#endif

void quantize_scalar(const float * x, int n, int8_t * q, float * d, float * sum) {
  for (int b = 0; b < n / kQ8Block; ++b) {
    const float * xb = x + b * kQ8Block;
    float amax = 0.0f;
    for (int c = 0; c < kQ8Block; ++c) amax = std::fmax(amax, std::fabs(xb[c]));
    d[b] = amax / 127.0f;
    const float inv = amax > 0.0f ? 127.0f / amax : 0.0f;
    int8_t * qb = q + b * kQ8Block;
    int s = 0;
    for (int j = 0; j < 16; ++j) {
      qb[j] = static_cast<int8_t>(std::nearbyint(xb[2 * j] * inv));
      qb[16 + j] = static_cast<int8_t>(std::nearbyint(xb[2 * j + 1] * inv));
      s += qb[j] + qb[16 + j];
    }
    sum[b] = static_cast<float>(s);
  }
}

// The active path's pair kernels over `rows` rows; false where they do not apply (the scalar path, rows pair_fits
// refuses), and the caller takes the tiles or the scalar reference.
bool pair_rows(const uint8_t * q, const uint16_t * scales, int nb, int64_t rows, const q8_rows & a, int n, float * y,
               int64_t ldy) {
#ifdef RT_Q8_X86
  if (!pair_fits(nb)) return false;
  switch (g_isa) {
    case cpu_isa::avx512_vnni: pair_avx512vnni_n(q, scales, nb, rows, a, n, y, ldy); return true;
    case cpu_isa::avx_vnni: pair_avxvnni_n(q, scales, nb, rows, a, n, y, ldy); return true;
    case cpu_isa::avx2: pair_avx2_n(q, scales, nb, rows, a, n, y, ldy); return true;
    default: return false;
  }
#else
  (void)q, (void)scales, (void)nb, (void)rows, (void)a, (void)n, (void)y, (void)ldy;
  return false;
#endif
}

}  // namespace

const char * cpu_isa_name(cpu_isa isa) {
  switch (isa) {
    case cpu_isa::scalar: return "scalar";
    case cpu_isa::avx2: return "avx2";
    case cpu_isa::avx_vnni: return "avx-vnni";
    case cpu_isa::avx512_vnni: return "avx512-vnni";
  }
  return "?";
}

bool cpu_isa_supported(cpu_isa isa) { return supported(isa); }
cpu_isa cpu_isa_active() { return g_isa; }

bool cpu_isa_force(cpu_isa isa) {
  if (!supported(isa)) return false;
  g_isa = isa;
  return true;
}

void cpu_isa_reset() { g_isa = best(); }

void cpu_quantize_q8(const float * x, int n, int8_t * q, float * d, float * sum) {
#ifdef RT_Q8_X86
  if (g_isa != cpu_isa::scalar) return quantize_avx2(x, n, q, d, sum);
#endif
  quantize_scalar(x, n, q, d, sum);
}

void cpu_row_dot_q4q8_n(const uint8_t * qrow, const uint16_t * srow, int cols, const q8_rows & a, int n, float * y, int64_t ldy) {
  const int nb = cols / kQ8Block;
  if (pair_rows(qrow, srow, nb, 1, a, n, y, ldy)) return;
  switch (g_isa) {
#ifdef RT_Q8_X86
    case cpu_isa::avx512_vnni: return tiles<run_avx512vnni>(qrow, srow, nb, a, n, y, ldy);
    case cpu_isa::avx_vnni: return tiles<run_avxvnni>(qrow, srow, nb, a, n, y, ldy);
    case cpu_isa::avx2: return tiles<run_avx2>(qrow, srow, nb, a, n, y, ldy);
#endif
    default: return scalar_dot(qrow, srow, cols, a, n, y, ldy);
  }
}

void cpu_rows_dot_q4q8(const uint8_t * q, const uint16_t * scales, int cols, int64_t rows, const q8_rows & a, int n, float * y, int64_t ldy) {
  const int nb = cols / kQ8Block;
  if (pair_rows(q, scales, nb, rows, a, n, y, ldy)) return;
  for (int64_t r = 0; r < rows; ++r) cpu_row_dot_q4q8_n(q + r * (cols / 2), scales + r * nb, cols, a, n, y + r, ldy);
}

}  // namespace rt
