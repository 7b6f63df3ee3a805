#include <cmath>
#include <cstdint>

#include "quant/qpacked-search.h"
#include "quant/qpacked.h"

#if (defined(__GNUC__) || defined(__clang__)) && (defined(__x86_64__) || defined(__i386__))
#include <immintrin.h>
// AVX2 (and F16C) without FMA: each multiply and add must round on its own, as the reference's do (GCC contracts
// vector arithmetic into FMAs where the target allows them).
#define RT_QP_AVX2 __attribute__((target("avx2,f16c")))
#define RT_QP_HAVE 1
#elif defined(_MSC_VER) && defined(_M_X64)
#include <intrin.h>
#define RT_QP_AVX2
#define RT_QP_HAVE 1
#endif

namespace rt {

#ifdef RT_QP_HAVE
namespace {

constexpr int kLanes = 4;
constexpr int kVectors = 3;  // the ten candidates in twelve lanes: the last two repeat the tenth and are never kept
constexpr int kCandidates = 10;
static_assert(sizeof(kHq4Candidates) / sizeof(kHq4Candidates[0]) == kCandidates, "candidate count");

struct search_tables {
  double mid[15];   // midpoints between neighbouring levels
  double step[15];  // K[j + 1] - K[j]
  float midf[15];   // the same midpoints (halves of small integers: exact in float)
  alignas(32) float level[16];
  double cand[kVectors * kLanes];
  search_tables() {
    for (int j = 0; j < 15; ++j) {
      mid[j] = (static_cast<double>(kHq4Codebook[j]) + kHq4Codebook[j + 1]) / 2.0;
      step[j] = static_cast<double>(kHq4Codebook[j + 1]) - kHq4Codebook[j];
      midf[j] = static_cast<float>(mid[j]);
    }
    for (int j = 0; j < 16; ++j) level[j] = kHq4Codebook[j];
    for (int i = 0; i < kVectors * kLanes; ++i) cand[i] = kHq4Candidates[i < kCandidates ? i : kCandidates - 1];
  }
};
const search_tables g_tab;

// The level K[k] of each lane's t, k the number of midpoints strictly below t (none for a NaN, as in the reference's
// binary search). The levels' steps are small integers, so their sum is exact in any order; two running sums keep
// the chain short without holding fifteen masks in registers.
RT_QP_AVX2 inline __m256d level_of(__m256d t) {
  __m256d a = _mm256_set1_pd(kHq4Codebook[0]), b = _mm256_setzero_pd();
  for (int j = 0; j < 15; j += 2) {
    a = _mm256_add_pd(a, _mm256_and_pd(_mm256_cmp_pd(t, _mm256_set1_pd(g_tab.mid[j]), _CMP_GT_OQ), _mm256_set1_pd(g_tab.step[j])));
    if (j + 1 < 15)
      b = _mm256_add_pd(b, _mm256_and_pd(_mm256_cmp_pd(t, _mm256_set1_pd(g_tab.mid[j + 1]), _CMP_GT_OQ),
                                         _mm256_set1_pd(g_tab.step[j + 1])));
  }
  return _mm256_add_pd(a, b);
}

// The code k itself, for four values.
RT_QP_AVX2 inline __m128i code_of(__m256d t) {
  __m256d a = _mm256_setzero_pd(), b = _mm256_setzero_pd();
  const __m256d one = _mm256_set1_pd(1.0);
  for (int j = 0; j < 15; j += 2) {
    a = _mm256_add_pd(a, _mm256_and_pd(_mm256_cmp_pd(t, _mm256_set1_pd(g_tab.mid[j]), _CMP_GT_OQ), one));
    if (j + 1 < 15) b = _mm256_add_pd(b, _mm256_and_pd(_mm256_cmp_pd(t, _mm256_set1_pd(g_tab.mid[j + 1]), _CMP_GT_OQ), one));
  }
  return _mm256_cvttpd_epi32(_mm256_add_pd(a, b));
}

// x / s to float, near enough: x times the rounded reciprocal r of s is within two units in the last place of the
// double quotient, so after rounding to float it is the float of the exact quotient or a neighbour.
RT_QP_AVX2 inline __m128 quotient_f(__m256d x, __m256d r) { return _mm256_cvtpd_ps(_mm256_mul_pd(x, r)); }

// The levels of two values x0, x1 (broadcast) at the twelve lanes' scales s (r: their reciprocals): k[i][v] for value
// i, vector v, as the reference's double comparisons of the exact quotient give them. They are compared in float
// instead, eight lanes a compare: a midpoint is a float, so the float of the quotient compares with it as the quotient
// does unless the two land on or next to each other. A pair with any lane within a few float steps of a multiple of
// 1/2 (every midpoint is one) takes the exact divisions and the double comparisons: 3.5% of pairs on Student-t
// floats, 13% on BF16 weights (whose quotients fall on small fractions more often), most of them the group's largest
// value, whose first quotients are the candidates themselves. (Falling back by half vector instead was slower.)
RT_QP_AVX2 inline void levels_of_pair(__m256d x0, __m256d x1, const __m256d (&s)[kVectors], const __m256d (&r)[kVectors],
                                      __m256d (&k)[2][kVectors]) {
  const __m256 f[3] = {_mm256_set_m128(quotient_f(x0, r[1]), quotient_f(x0, r[0])),
                       _mm256_set_m128(quotient_f(x1, r[1]), quotient_f(x1, r[0])),
                       _mm256_set_m128(quotient_f(x1, r[2]), quotient_f(x0, r[2]))};
  const __m256 magnitude = _mm256_castsi256_ps(_mm256_set1_epi32(0x7FFFFFFF)), band = _mm256_set1_ps(0x1p-19f);
  const __m256 lo = _mm256_load_ps(g_tab.level), hi = _mm256_load_ps(g_tab.level + 8);
  __m256 lev[3];
  __m256 halves = _mm256_setzero_ps();
  for (int q = 0; q < 3; ++q) {
    __m256i a = _mm256_setzero_si256(), b = _mm256_setzero_si256();
    for (int j = 0; j < 15; j += 2) {
      a = _mm256_sub_epi32(a, _mm256_castps_si256(_mm256_cmp_ps(f[q], _mm256_set1_ps(g_tab.midf[j]), _CMP_GT_OQ)));
      if (j + 1 < 15) b = _mm256_sub_epi32(b, _mm256_castps_si256(_mm256_cmp_ps(f[q], _mm256_set1_ps(g_tab.midf[j + 1]), _CMP_GT_OQ)));
    }
    const __m256i code = _mm256_add_epi32(a, b);
    // Within a few float steps of a multiple of 1/2 (the bound scales with the value: a float step is 2^-23 of it).
    const __m256 twice = _mm256_add_ps(f[q], f[q]);
    const __m256 off = _mm256_and_ps(_mm256_sub_ps(twice, _mm256_round_ps(twice, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC)), magnitude);
    halves = _mm256_or_ps(halves, _mm256_cmp_ps(off, _mm256_mul_ps(_mm256_and_ps(twice, magnitude), band), _CMP_LE_OQ));
    // Codes 8..15 have bit 3 set: moved to the sign bit, it picks the upper half of the table.
    lev[q] = _mm256_blendv_ps(_mm256_permutevar8x32_ps(lo, code), _mm256_permutevar8x32_ps(hi, code),
                              _mm256_castsi256_ps(_mm256_slli_epi32(code, 28)));
  }
  if (_mm256_movemask_ps(halves) != 0) {
    for (int i = 0; i < 2; ++i)
      for (int v = 0; v < kVectors; ++v) k[i][v] = level_of(_mm256_div_pd(i == 0 ? x0 : x1, s[v]));
    return;
  }
  k[0][0] = _mm256_cvtps_pd(_mm256_castps256_ps128(lev[0]));
  k[0][1] = _mm256_cvtps_pd(_mm256_extractf128_ps(lev[0], 1));
  k[1][0] = _mm256_cvtps_pd(_mm256_castps256_ps128(lev[1]));
  k[1][1] = _mm256_cvtps_pd(_mm256_extractf128_ps(lev[1], 1));
  k[0][2] = _mm256_cvtps_pd(_mm256_castps256_ps128(lev[2]));
  k[1][2] = _mm256_cvtps_pd(_mm256_extractf128_ps(lev[2], 1));
}

}  // namespace

RT_QP_AVX2 bool qpacked_search_group_avx2(const float * x, int group, uint8_t * u, uint16_t * h, qpacked_search_trace * trace) {
  if (trace != nullptr) trace->clear();
  const double m = x[qpacked_largest_index(x, group)];
  if (m == 0.0) {
    for (int c = 0; c < group; ++c) u[c] = 8;
    *h = 0;
    return true;
  }
  // First scales, least-squares refits (sums in index order in every lane).
  __m256d d0[kVectors], num[kVectors], den[kVectors];
  for (int v = 0; v < kVectors; ++v) {
    d0[v] = _mm256_div_pd(_mm256_set1_pd(m), _mm256_loadu_pd(g_tab.cand + kLanes * v));
    num[v] = _mm256_setzero_pd();
    den[v] = _mm256_setzero_pd();
  }
  // Values two at a time (the group is even), each lane's sums still in index order.
  const __m256d one = _mm256_set1_pd(1.0);
  __m256d k[2][kVectors], r[kVectors];
  for (int v = 0; v < kVectors; ++v) r[v] = _mm256_div_pd(one, d0[v]);
  for (int c = 0; c < group; c += 2) {
    const __m256d xs[2] = {_mm256_set1_pd(x[c]), _mm256_set1_pd(x[c + 1])};
    levels_of_pair(xs[0], xs[1], d0, r, k);
    for (int i = 0; i < 2; ++i)
      for (int v = 0; v < kVectors; ++v) {
        num[v] = _mm256_add_pd(num[v], _mm256_mul_pd(k[i][v], xs[i]));
        den[v] = _mm256_add_pd(den[v], _mm256_mul_pd(k[i][v], k[i][v]));
      }
  }
  // The refits to float, then to FP16 bits with round to nearest even (F16C gives fp16_from_f32's bits for every
  // value but NaN, whose candidates are never kept) and back.
  __m128 d1f[kVectors];
  for (int v = 0; v < kVectors; ++v) {
    const __m256d refit = _mm256_div_pd(num[v], den[v]);
    const __m256d d1 = _mm256_blendv_pd(d0[v], refit, _mm256_cmp_pd(den[v], _mm256_setzero_pd(), _CMP_GT_OQ));
    if (trace != nullptr) {
      alignas(32) double lanes[kLanes];
      _mm256_store_pd(lanes, d1);
      for (int i = 0; i < kLanes && kLanes * v + i < kCandidates; ++i) trace->d1[kLanes * v + i] = lanes[i];
    }
    d1f[v] = _mm256_cvtpd_ps(d1);
  }
  alignas(16) uint16_t hs[kVectors * kLanes];
  const __m128i h01 = _mm256_cvtps_ph(_mm256_set_m128(d1f[1], d1f[0]), _MM_FROUND_TO_NEAREST_INT);
  const __m128i h2 = _mm_cvtps_ph(d1f[2], _MM_FROUND_TO_NEAREST_INT);
  _mm_store_si128(reinterpret_cast<__m128i *>(hs), h01);
  _mm_storel_epi64(reinterpret_cast<__m128i *>(hs + 8), h2);
  const __m256 back01 = _mm256_cvtph_ps(h01);
  // Each lane's squared error at its FP16 scale. The reference puts every value at K[8] when the scale is zero; any
  // level times a zero scale is zero, so the error needs no such case (the winner's codes below do).
  __m256d s[kVectors], e[kVectors];
  s[0] = _mm256_cvtps_pd(_mm256_castps256_ps128(back01));
  s[1] = _mm256_cvtps_pd(_mm256_extractf128_ps(back01, 1));
  s[2] = _mm256_cvtps_pd(_mm_cvtph_ps(h2));
  alignas(32) double dh[kVectors * kLanes];
  for (int v = 0; v < kVectors; ++v) {
    _mm256_store_pd(dh + kLanes * v, s[v]);
    e[v] = _mm256_setzero_pd();
  }
  for (int v = 0; v < kVectors; ++v) r[v] = _mm256_div_pd(one, s[v]);
  for (int c = 0; c < group; c += 2) {
    const __m256d xs[2] = {_mm256_set1_pd(x[c]), _mm256_set1_pd(x[c + 1])};
    levels_of_pair(xs[0], xs[1], s, r, k);
    for (int i = 0; i < 2; ++i)
      for (int v = 0; v < kVectors; ++v) {
        const __m256d diff = _mm256_sub_pd(_mm256_mul_pd(k[i][v], s[v]), xs[i]);
        e[v] = _mm256_add_pd(e[v], _mm256_mul_pd(diff, diff));
      }
  }
  alignas(32) double err[kVectors * kLanes];
  for (int v = 0; v < kVectors; ++v) _mm256_store_pd(err + kLanes * v, e[v]);
  // The first candidate with the least error, in the reference's order.
  int best = -1;
  for (int i = 0; i < kCandidates; ++i) {
    if (!std::isfinite(dh[i])) continue;
    if (trace != nullptr) trace->err[i] = err[i];
    if (best < 0 || err[i] < err[best]) best = i;
  }
  if (best < 0) {
    for (int c = 0; c < group; ++c) u[c] = 8;
    *h = 0;
    return true;
  }
  // The winner's codes, four values at a time.
  const __m256d sb = _mm256_set1_pd(dh[best]);
  if (dh[best] == 0.0) {
    for (int c = 0; c < group; ++c) u[c] = 8;
  } else {
    int c = 0;
    for (; c + kLanes <= group; c += kLanes) {
      alignas(16) int32_t k[kLanes];
      _mm_store_si128(reinterpret_cast<__m128i *>(k), code_of(_mm256_div_pd(_mm256_cvtps_pd(_mm_loadu_ps(x + c)), sb)));
      for (int i = 0; i < kLanes; ++i) u[c + i] = static_cast<uint8_t>(k[i]);
    }
    for (; c < group; ++c) u[c] = static_cast<uint8_t>(qpacked_code(x[c] / dh[best]));
  }
  *h = hs[best];
  return true;
}
#else
bool qpacked_search_group_avx2(const float *, int, uint8_t *, uint16_t *, qpacked_search_trace *) { return false; }
#endif

}  // namespace rt
