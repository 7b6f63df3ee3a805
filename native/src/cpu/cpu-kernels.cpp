#include "cpu/cpu-kernels.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "cpu/q4-q8-dot.h"
#include "cpu/simd-lanes.h"
#include "quant/q4-0.h"
#include "quant/qpacked.h"

#if defined(_MSC_VER) && !defined(__clang__)
#define RT_NOINLINE __declspec(noinline)
#else
#define RT_NOINLINE __attribute__((noinline))
#endif

namespace rt {

namespace {

// The float tiles: rows by tokens a call (12 accumulators, 3 widened weight lanes and an activation: AVX2's 16
// registers).
constexpr int kTileRows = 3;
constexpr int kTileTokens = 2;

#if defined(RT_X86_SIMD) && defined(_MSC_VER) && !defined(__clang__)
bool detect_simd() {
  int r[4];
  __cpuid(r, 1);
  const bool fma = (r[2] >> 12) & 1, osxsave = (r[2] >> 27) & 1, f16c = (r[2] >> 29) & 1;
  if (!fma || !osxsave || !f16c || (_xgetbv(0) & 6) != 6) return false;
  __cpuidex(r, 7, 0);
  return (r[1] >> 5) & 1;  // AVX2
}
bool g_simd = detect_simd();
#elif defined(RT_X86_SIMD)
bool detect_simd() {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && __builtin_cpu_supports("f16c");
}
bool g_simd = detect_simd();
#else
bool g_simd = false;
#endif

#if defined(RT_X86_SIMD) && !defined(_MSC_VER)
bool detect_avx512() {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl");
}
bool g_avx512 = detect_avx512();
#else
bool g_avx512 = false;
#endif

using lanes::bf16_lanes;
using lanes::f16_lanes;
using lanes::f32_lanes;

template <class L>
float dot(const typename L::elem * w, const float * x, int n);

template <class L>
float scalar_dot(const typename L::elem * w, const float * x, int n) {
  float s = 0.0f;
  for (int i = 0; i < n; ++i) s += L::one(w[i]) * x[i];
  return s;
}
float scalar_dot_q4(const uint8_t * q, const uint16_t * scales, int n, int group, const float * x) {
  float s = 0.0f;
  for (int g0 = 0; g0 < n; g0 += group) {
    float acc = 0.0f;
    for (int c = g0; c < g0 + group; c += 2) {
      const uint8_t b = q[c / 2];
      acc += static_cast<float>(kHq4Codebook[b & 0xf]) * x[c];
      acc += static_cast<float>(kHq4Codebook[b >> 4]) * x[c + 1];
    }
    s += acc * f32_from_fp16(scales[g0 / group]);
  }
  return s;
}

#ifdef RT_X86_SIMD

RT_AVX2 inline float hsum(__m256 v) {
  __m128 lo = _mm256_castps256_ps128(v);
  __m128 hi = _mm256_extractf128_ps(v, 1);
  lo = _mm_add_ps(lo, hi);
  lo = _mm_add_ps(lo, _mm_movehl_ps(lo, lo));
  lo = _mm_add_ss(lo, _mm_shuffle_ps(lo, lo, 1));
  return _mm_cvtss_f32(lo);
}

// The elements after the last 16-wide step, one at a time. One out-of-line copy, so that every kernel adds them with
// the same instructions (inlined, the compiler may contract them into FMAs in one kernel and not in another).
template <class L>
RT_AVX2 RT_NOINLINE float dot_tail(float s, const typename L::elem * w, const float * x, int i, int n) {
  for (; i < n; ++i) s += L::one(w[i]) * x[i];
  return s;
}

template <class L>
RT_AVX2 float avx2_dot(const typename L::elem * w, const float * x, int n) {
  __m256 a0 = _mm256_setzero_ps(), a1 = _mm256_setzero_ps();
  int i = 0;
  for (; i + 16 <= n; i += 16) {
    a0 = _mm256_fmadd_ps(L::eight(w + i), _mm256_loadu_ps(x + i), a0);
    a1 = _mm256_fmadd_ps(L::eight(w + i + 8), _mm256_loadu_ps(x + i + 8), a1);
  }
  float s = hsum(_mm256_add_ps(a0, a1));
  s = dot_tail<L>(s, w, x, i, n);
  return s;
}

RT_AVX2 inline __m128i codebook_levels() { return _mm_loadu_si128(reinterpret_cast<const __m128i *>(kHq4Codebook)); }

RT_AVX2 float avx2_dot_q4(const uint8_t * q, const uint16_t * scales, int n, int group, const float * x) {
  const __m128i mask = _mm_set1_epi8(0x0f);
  const __m128i levels = codebook_levels();
  __m256 total = _mm256_setzero_ps();
  for (int g0 = 0; g0 < n; g0 += group) {
    __m256 acc = _mm256_setzero_ps();
    for (int c = g0; c < g0 + group; c += 16) {
      __m128i bytes = _mm_loadl_epi64(reinterpret_cast<const __m128i *>(q + c / 2));
      __m128i lo = _mm_and_si128(bytes, mask);
      __m128i hi = _mm_and_si128(_mm_srli_epi16(bytes, 4), mask);
      __m128i vals = _mm_shuffle_epi8(levels, _mm_unpacklo_epi8(lo, hi));  // columns c..c+15 in order, as K[u]
      __m256 v0 = _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(vals));
      __m256 v1 = _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_srli_si128(vals, 8)));
      acc = _mm256_fmadd_ps(v0, _mm256_loadu_ps(x + c), acc);
      acc = _mm256_fmadd_ps(v1, _mm256_loadu_ps(x + c + 8), acc);
    }
    total = _mm256_fmadd_ps(acc, _mm256_set1_ps(_cvtsh_ss(scales[g0 / group])), total);
  }
  return hsum(total);
}

// Four activation rows against one weight row. Each token keeps exactly avx2_dot's accumulation order, so the
// results equal four separate dots bit for bit; the weight lanes are loaded and widened once instead of four times.
template <class L>
RT_AVX2 void avx2_dot_x4(const typename L::elem * w, const float * x, int64_t ldx, int n, float * y, int64_t ldy) {
  __m256 a0[4], a1[4];
  for (int t = 0; t < 4; ++t) a0[t] = a1[t] = _mm256_setzero_ps();
  int i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m256 w0 = L::eight(w + i), w1 = L::eight(w + i + 8);
    for (int t = 0; t < 4; ++t) {
      a0[t] = _mm256_fmadd_ps(w0, _mm256_loadu_ps(x + t * ldx + i), a0[t]);
      a1[t] = _mm256_fmadd_ps(w1, _mm256_loadu_ps(x + t * ldx + i + 8), a1[t]);
    }
  }
  for (int t = 0; t < 4; ++t) {
    float s = hsum(_mm256_add_ps(a0[t], a1[t]));
    s = dot_tail<L>(s, w, x + t * ldx, i, n);
    y[t * ldy] = s;
  }
}


// The INT4 counterpart of avx2_dot_x4: nibbles unpacked once per four tokens, avx2_dot_q4's order per token.
RT_AVX2 void avx2_dot_q4_x4(const uint8_t * q, const uint16_t * scales, int n, int group, const float * x, int64_t ldx,
                            float * y, int64_t ldy) {
  const __m128i mask = _mm_set1_epi8(0x0f);
  const __m128i levels = codebook_levels();
  __m256 total[4];
  for (int t = 0; t < 4; ++t) total[t] = _mm256_setzero_ps();
  for (int g0 = 0; g0 < n; g0 += group) {
    __m256 acc[4];
    for (int t = 0; t < 4; ++t) acc[t] = _mm256_setzero_ps();
    for (int c = g0; c < g0 + group; c += 16) {
      __m128i bytes = _mm_loadl_epi64(reinterpret_cast<const __m128i *>(q + c / 2));
      __m128i lo = _mm_and_si128(bytes, mask);
      __m128i hi = _mm_and_si128(_mm_srli_epi16(bytes, 4), mask);
      __m128i vals = _mm_shuffle_epi8(levels, _mm_unpacklo_epi8(lo, hi));
      const __m256 v0 = _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(vals));
      const __m256 v1 = _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_srli_si128(vals, 8)));
      for (int t = 0; t < 4; ++t) {
        acc[t] = _mm256_fmadd_ps(v0, _mm256_loadu_ps(x + t * ldx + c), acc[t]);
        acc[t] = _mm256_fmadd_ps(v1, _mm256_loadu_ps(x + t * ldx + c + 8), acc[t]);
      }
    }
    const __m256 scale = _mm256_set1_ps(_cvtsh_ss(scales[g0 / group]));
    for (int t = 0; t < 4; ++t) total[t] = _mm256_fmadd_ps(acc[t], scale, total[t]);
  }
  for (int t = 0; t < 4; ++t) y[t * ldy] = hsum(total[t]);
}

// R weight rows (stride ldw) against T tokens. Each output keeps avx2_dot's order (two accumulators over the 16-wide
// steps, their sum, then dot_tail), so its bits equal one avx2_dot's; a widened weight load serves T tokens and an
// activation load R rows, where avx2_dot_x4 read four activations per weight load and streamed every token's
// activations from L2 again for each row, and a lone token's dot waited on two accumulators' FMA latency.
template <class L, int R, int T>
RT_AVX2 void avx2_tile(const typename L::elem * w, int64_t ldw, const float * x, int64_t ldx, int n, float * y, int64_t ldy) {
  __m256 a0[R][T], a1[R][T];
  RT_UNROLL(4)
  for (int r = 0; r < R; ++r) {
    RT_UNROLL(4)
    for (int t = 0; t < T; ++t) a0[r][t] = a1[r][t] = _mm256_setzero_ps();
  }
  int i = 0;
  for (; i + 16 <= n; i += 16) {
    __m256 wv[R];
    RT_UNROLL(4)
    for (int r = 0; r < R; ++r) wv[r] = L::eight(w + r * ldw + i);
    RT_UNROLL(4)
    for (int t = 0; t < T; ++t) {
      const __m256 xv = _mm256_loadu_ps(x + t * ldx + i);
      RT_UNROLL(4)
      for (int r = 0; r < R; ++r) a0[r][t] = _mm256_fmadd_ps(wv[r], xv, a0[r][t]);
    }
    RT_UNROLL(4)
    for (int r = 0; r < R; ++r) wv[r] = L::eight(w + r * ldw + i + 8);
    RT_UNROLL(4)
    for (int t = 0; t < T; ++t) {
      const __m256 xv = _mm256_loadu_ps(x + t * ldx + i + 8);
      RT_UNROLL(4)
      for (int r = 0; r < R; ++r) a1[r][t] = _mm256_fmadd_ps(wv[r], xv, a1[r][t]);
    }
  }
  for (int r = 0; r < R; ++r)
    for (int t = 0; t < T; ++t) {
      float s = hsum(_mm256_add_ps(a0[r][t], a1[r][t]));
      s = dot_tail<L>(s, w + r * ldw, x + t * ldx, i, n);
      y[r + t * ldy] = s;
    }
}

template <class L, int R>
RT_AVX2 void avx2_tile_rows(const typename L::elem * w, int64_t ldw, const float * x, int64_t ldx, int in, int n, float * y,
                            int64_t ldy) {
  int t = 0;
  for (; t + kTileTokens <= n; t += kTileTokens) avx2_tile<L, R, kTileTokens>(w, ldw, x + t * ldx, ldx, in, y + t * ldy, ldy);
  for (; t < n; ++t) avx2_tile<L, R, 1>(w, ldw, x + t * ldx, ldx, in, y + t * ldy, ldy);
}
#endif

template <class L>
void dot_n(const typename L::elem * w, const float * x, int64_t ldx, int n_in, int n, float * y, int64_t ldy) {
  int t = 0;
#ifdef RT_X86_SIMD
  if (g_simd)
    for (; t + 4 <= n; t += 4) avx2_dot_x4<L>(w, x + t * ldx, ldx, n_in, y + t * ldy, ldy);
#endif
  for (; t < n; ++t) y[t * ldy] = dot<L>(w, x + t * ldx, n_in);
}

template <class L>
float dot(const typename L::elem * w, const float * x, int n) {
#ifdef RT_X86_SIMD
  if (g_simd) return avx2_dot<L>(w, x, n);
#endif
  return scalar_dot<L>(w, x, n);
}

#ifdef RT_X86_SIMD
template <class L>
RT_AVX2 void avx2_tiles(int rows, const typename L::elem * w, int64_t ldw, const float * x, int64_t ldx, int in, int n, float * y,
                        int64_t ldy) {
  static_assert(kTileRows == 3, "one case a row count");
  switch (rows) {
    case 3: return avx2_tile_rows<L, 3>(w, ldw, x, ldx, in, n, y, ldy);
    case 2: return avx2_tile_rows<L, 2>(w, ldw, x, ldx, in, n, y, ldy);
    default: return avx2_tile_rows<L, 1>(w, ldw, x, ldx, in, n, y, ldy);
  }
}
#endif

// Rows 0 .. count - 1 of a row-major matrix `in` wide against n tokens, row k's outputs at y[k + t * ldy], in tiles
// of rows by tokens; each output's bits are dot's.
template <class L>
void rows_dot_n(const typename L::elem * w, int in, int64_t count, const float * x, int64_t ldx, int n, float * y, int64_t ldy) {
#ifdef RT_X86_SIMD
  if (g_simd) {
    for (int64_t k = 0; k < count; k += kTileRows)
      avx2_tiles<L>(static_cast<int>(std::min<int64_t>(kTileRows, count - k)), w + k * in, in, x, ldx, in, n, y + k, ldy);
    return;
  }
#endif
  for (int64_t k = 0; k < count; ++k) dot_n<L>(w + k * in, x, ldx, in, n, y + k, ldy);
}

}  // namespace

bool cpu_kernels_simd() { return g_simd; }
bool cpu_kernels_avx512() { return g_avx512; }

cpu_float_path cpu_float_path_active() {
  const cpu_isa isa = cpu_isa_active();
  if (isa == cpu_isa::scalar || !g_simd) return cpu_float_path::scalar;
  if (g_avx512 && (isa == cpu_isa::avx512_vnni ||
                   (isa == cpu_isa::avx2 && !cpu_isa_supported(cpu_isa::avx_vnni) && !cpu_isa_supported(cpu_isa::avx512_vnni))))
    return cpu_float_path::avx512;
  return cpu_float_path::avx2;
}

const char * cpu_float_path_name(cpu_float_path path) {
  switch (path) {
    case cpu_float_path::avx512: return "avx512";
    case cpu_float_path::avx2: return "avx2";
    default: return "scalar";
  }
}

namespace {
bool g_q8 = true;
}  // namespace

bool cpu_kernels_q8_activations() { return g_q8; }
void cpu_kernels_set_q8_activations(bool enabled) { g_q8 = enabled; }

void cpu_kernels_set_simd(bool enabled) {
  if (enabled) cpu_isa_reset();
  else cpu_isa_force(cpu_isa::scalar);
#ifdef RT_HAVE_AVX512
  g_avx512 = enabled && detect_avx512();
#endif
#ifdef RT_X86_SIMD
  g_simd = enabled && detect_simd();
#else
  (void)enabled;
  g_simd = false;
#endif
}

float cpu_dot_f32(const float * w, const float * x, int n) { return dot<f32_lanes>(w, x, n); }
float cpu_dot_bf16(const uint16_t * w, const float * x, int n) { return dot<bf16_lanes>(w, x, n); }
float cpu_dot_f16(const uint16_t * w, const float * x, int n) { return dot<f16_lanes>(w, x, n); }

#ifdef RT_X86_SIMD
namespace {
RT_AVX2 void avx2_f32_to_f16(const float * x, uint16_t * out, int n) {
  int i = 0;
  for (; i + 8 <= n; i += 8)
    _mm_storeu_si128(reinterpret_cast<__m128i *>(out + i), _mm256_cvtps_ph(_mm256_loadu_ps(x + i), _MM_FROUND_TO_NEAREST_INT));
  for (; i < n; ++i) out[i] = fp16_from_f32(x[i]);
}
RT_AVX2 void avx2_axpy_f16(float a, const uint16_t * v, float * y, int n) {
  const __m256 av = _mm256_set1_ps(a);
  int i = 0;
  for (; i + 8 <= n; i += 8)
    _mm256_storeu_ps(y + i, _mm256_fmadd_ps(av, f16_lanes::eight(v + i), _mm256_loadu_ps(y + i)));
  for (; i < n; ++i) y[i] += a * f32_from_fp16(v[i]);
}
}  // namespace
#endif

void cpu_f32_to_f16(const float * x, uint16_t * out, int n) {
#ifdef RT_X86_SIMD
  if (g_simd) return avx2_f32_to_f16(x, out, n);
#endif
  for (int i = 0; i < n; ++i) out[i] = fp16_from_f32(x[i]);
}

void cpu_axpy_f16(float a, const uint16_t * v, float * y, int n) {
#ifdef RT_X86_SIMD
  if (g_simd) return avx2_axpy_f16(a, v, y, n);
#endif
  for (int i = 0; i < n; ++i) y[i] += a * f32_from_fp16(v[i]);
}

float cpu_dot_q4(const uint8_t * q, const uint16_t * scales, int n, int group, const float * x) {
#ifdef RT_X86_SIMD
  if (g_simd && group % 16 == 0) return avx2_dot_q4(q, scales, n, group, x);
#endif
  return scalar_dot_q4(q, scales, n, group, x);
}

void cpu_row_to_f32(const tensor_view & t, int64_t row, float * out) {
  const int64_t n = t.shape.back();
  switch (t.type) {
    case dtype::f32:
      std::memcpy(out, static_cast<const float *>(t.data) + row * n, static_cast<size_t>(n) * 4);
      break;
    case dtype::bf16: {
      const uint16_t * p = static_cast<const uint16_t *>(t.data) + row * n;
      for (int64_t i = 0; i < n; ++i) out[i] = f32_from_bf16(p[i]);
      break;
    }
    case dtype::f16: {
      const uint16_t * p = static_cast<const uint16_t *>(t.data) + row * n;
      for (int64_t i = 0; i < n; ++i) out[i] = f32_from_fp16(p[i]);
      break;
    }
    case dtype::u8:
      std::memset(out, 0, static_cast<size_t>(n) * 4);
      break;
  }
}

float cpu_row_dot(const tensor_view & w, int64_t r, const float * x) {
  const int in = static_cast<int>(w.shape[1]);
  switch (w.type) {
    case dtype::bf16: return cpu_dot_bf16(static_cast<const uint16_t *>(w.data) + r * in, x, in);
    case dtype::f16: return cpu_dot_f16(static_cast<const uint16_t *>(w.data) + r * in, x, in);
    default: return cpu_dot_f32(static_cast<const float *>(w.data) + r * in, x, in);
  }
}


void cpu_row_dot_n(const tensor_view & w, int64_t r, const float * x, int64_t ldx, int n, float * y, int64_t ldy) {
  const int in = static_cast<int>(w.shape[1]);
  switch (w.type) {
    case dtype::bf16: return dot_n<bf16_lanes>(static_cast<const uint16_t *>(w.data) + r * in, x, ldx, in, n, y, ldy);
    case dtype::f16: return dot_n<f16_lanes>(static_cast<const uint16_t *>(w.data) + r * in, x, ldx, in, n, y, ldy);
    default: return dot_n<f32_lanes>(static_cast<const float *>(w.data) + r * in, x, ldx, in, n, y, ldy);
  }
}

void cpu_rows_dot_n(const tensor_view & w, int64_t r, int64_t count, const float * x, int64_t ldx, int n, float * y, int64_t ldy) {
  const int in = static_cast<int>(w.shape[1]);
  switch (w.type) {
    case dtype::bf16: return rows_dot_n<bf16_lanes>(static_cast<const uint16_t *>(w.data) + r * in, in, count, x, ldx, n, y, ldy);
    case dtype::f16: return rows_dot_n<f16_lanes>(static_cast<const uint16_t *>(w.data) + r * in, in, count, x, ldx, n, y, ldy);
    default: return rows_dot_n<f32_lanes>(static_cast<const float *>(w.data) + r * in, in, count, x, ldx, n, y, ldy);
  }
}

void cpu_rows_dot_q4_0_n(const tensor_view & w, int64_t r, int64_t count, const float * x, int64_t ldx, int n, float * y, int64_t ldy) {
  const int in = static_cast<int>(w.shape[1]);
  // On the stack up to 4,096 columns (not thread_local: a vector's destructor at a request thread's exit corrupts
  // MinGW-w64's heap under Wine).
  float local[kTileRows * 4096];
  std::vector<float> heap;
  float * rounded = local;
  if (in > 4096) {
    heap.resize(static_cast<size_t>(kTileRows) * in);
    rounded = heap.data();
  }
  for (int64_t k = 0; k < count; k += kTileRows) {
    const int rows = static_cast<int>(std::min<int64_t>(kTileRows, count - k));
    for (int j = 0; j < rows; ++j) {
      float * row = rounded + static_cast<size_t>(j) * in;
      cpu_row_to_f32(w, r + k + j, row);
      q4_0_round_trip(row, in, row);
    }
    rows_dot_n<f32_lanes>(rounded, in, rows, x, ldx, n, y + k, ldy);
  }
}

void cpu_row_dot_q4_n(const tensor_view & q, const tensor_view & scales, int group, int64_t r, const float * x, int64_t ldx, int n,
                      float * y, int64_t ldy) {
  int t = 0;
#ifdef RT_X86_SIMD
  if (g_simd && group % 16 == 0) {
    const int in = static_cast<int>(q.shape[1] * 2);
    const uint8_t * qr = static_cast<const uint8_t *>(q.data) + r * (in / 2);
    const uint16_t * sr = static_cast<const uint16_t *>(scales.data) + r * (in / group);
    for (; t + 4 <= n; t += 4) avx2_dot_q4_x4(qr, sr, in, group, x + t * ldx, ldx, y + t * ldy, ldy);
  }
#endif
  for (; t < n; ++t) y[t * ldy] = cpu_row_dot_q4(q, scales, group, r, x + t * ldx);
}

float cpu_row_dot_q4(const tensor_view & q, const tensor_view & scales, int group, int64_t r, const float * x) {
  const int in = static_cast<int>(q.shape[1] * 2);
  return cpu_dot_q4(static_cast<const uint8_t *>(q.data) + r * (in / 2), static_cast<const uint16_t *>(scales.data) + r * (in / group),
                    in, group, x);
}

}  // namespace rt
