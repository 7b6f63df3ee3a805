#include <cmath>
#include <cstdint>

#include "quant/qpacked-search.h"
#include "quant/qpacked.h"

#if (defined(__GNUC__) || defined(__clang__)) && (defined(__x86_64__) || defined(__i386__))
#include <immintrin.h>
// AVX2 without FMA: each multiply and add must round on its own, as the reference's do (GCC contracts vector
// arithmetic into FMAs where the target allows them).
#define RT_QP_AVX2 __attribute__((target("avx2")))
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
  double cand[kVectors * kLanes];
  search_tables() {
    for (int j = 0; j < 15; ++j) {
      mid[j] = (static_cast<double>(kHq4Codebook[j]) + kHq4Codebook[j + 1]) / 2.0;
      step[j] = static_cast<double>(kHq4Codebook[j + 1]) - kHq4Codebook[j];
    }
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

}  // namespace

RT_QP_AVX2 bool qpacked_search_group_avx2(const float * x, int group, uint8_t * u, uint16_t * h) {
  int imax = 0;
  for (int c = 1; c < group; ++c) {
    if (std::fabs(x[c]) > std::fabs(x[imax])) imax = c;
  }
  const double m = x[imax];
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
  for (int c = 0; c < group; ++c) {
    const __m256d xc = _mm256_set1_pd(x[c]);
    for (int v = 0; v < kVectors; ++v) {
      const __m256d k = level_of(_mm256_div_pd(xc, d0[v]));
      num[v] = _mm256_add_pd(num[v], _mm256_mul_pd(k, xc));
      den[v] = _mm256_add_pd(den[v], _mm256_mul_pd(k, k));
    }
  }
  alignas(32) double d1[kVectors * kLanes], dh[kVectors * kLanes];
  for (int v = 0; v < kVectors; ++v) {
    const __m256d refit = _mm256_div_pd(num[v], den[v]);
    _mm256_store_pd(d1 + kLanes * v, _mm256_blendv_pd(d0[v], refit, _mm256_cmp_pd(den[v], _mm256_setzero_pd(), _CMP_GT_OQ)));
  }
  uint16_t hs[kVectors * kLanes];
  for (int i = 0; i < kVectors * kLanes; ++i) {
    hs[i] = fp16_from_f32(static_cast<float>(d1[i]));
    dh[i] = f32_from_fp16(hs[i]);
  }
  // Each lane's squared error at its FP16 scale (a zero scale puts every value at level K[8]).
  __m256d s[kVectors], zero[kVectors], e[kVectors];
  for (int v = 0; v < kVectors; ++v) {
    s[v] = _mm256_load_pd(dh + kLanes * v);
    zero[v] = _mm256_cmp_pd(s[v], _mm256_setzero_pd(), _CMP_EQ_OQ);
    e[v] = _mm256_setzero_pd();
  }
  const __m256d level8 = _mm256_set1_pd(kHq4Codebook[8]);
  for (int c = 0; c < group; ++c) {
    const __m256d xc = _mm256_set1_pd(x[c]);
    for (int v = 0; v < kVectors; ++v) {
      const __m256d k = _mm256_blendv_pd(level_of(_mm256_div_pd(xc, s[v])), level8, zero[v]);
      const __m256d diff = _mm256_sub_pd(_mm256_mul_pd(k, s[v]), xc);
      e[v] = _mm256_add_pd(e[v], _mm256_mul_pd(diff, diff));
    }
  }
  alignas(32) double err[kVectors * kLanes];
  for (int v = 0; v < kVectors; ++v) _mm256_store_pd(err + kLanes * v, e[v]);
  // The first candidate with the least error, in the reference's order.
  int best = -1;
  for (int i = 0; i < kCandidates; ++i) {
    if (!std::isfinite(dh[i])) continue;
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
bool qpacked_search_group_avx2(const float *, int, uint8_t *, uint16_t *) { return false; }
#endif

}  // namespace rt
