#include "quant/q4-0.h"

#include <algorithm>
#include <cmath>

#include "cpu/cpu-kernels.h"
#include "quant/qpacked.h"

#if (defined(__GNUC__) || defined(__clang__)) && (defined(__x86_64__) || defined(__i386__))
#include <immintrin.h>
// AVX2 and F16C without FMA: the multiply and the add must round on their own, as ggml's do.
#define RT_Q40_AVX2 __attribute__((target("avx2,f16c")))
#define RT_Q40_HAVE 1
#endif

namespace rt {

q4_0_block q4_0_quantize_block(const float * x) {
  float amax = 0.0f;
  float max = 0.0f;
  for (int j = 0; j < kQ4_0Block; ++j) {
    if (amax < std::fabs(x[j])) {
      amax = std::fabs(x[j]);
      max = x[j];
    }
  }
  const float d = max / -8.0f;
  const float id = d != 0.0f ? 1.0f / d : 0.0f;
  q4_0_block b;
  b.d = fp16_from_f32(d);
  for (int j = 0; j < kQ4_0Block; ++j) {
    const float scaled = x[j] * id;
    b.q[j] = static_cast<uint8_t>(std::min(15, static_cast<int>(scaled + 8.5f)));
  }
  return b;
}

namespace {

void round_trip_scalar(const float * x, int64_t n, float * out) {
  for (int64_t i = 0; i + kQ4_0Block <= n; i += kQ4_0Block) {
    const q4_0_block b = q4_0_quantize_block(x + i);
    const float d = f32_from_fp16(b.d);
    for (int j = 0; j < kQ4_0Block; ++j) out[i + j] = static_cast<float>(static_cast<int>(b.q[j]) - 8) * d;
  }
}

#ifdef RT_Q40_HAVE
// The scalar path's operations lane by lane: the same values bit for bit (test-q4-0 compares them).
RT_Q40_AVX2 void round_trip_avx2(const float * x, int64_t n, float * out) {
  const __m256 abs_mask = _mm256_castsi256_ps(_mm256_set1_epi32(0x7FFFFFFF));
  for (int64_t i = 0; i + kQ4_0Block <= n; i += kQ4_0Block) {
    __m256 v[4], a[4];
    for (int k = 0; k < 4; ++k) {
      v[k] = _mm256_loadu_ps(x + i + 8 * k);
      a[k] = _mm256_and_ps(v[k], abs_mask);
    }
    __m256 m = _mm256_max_ps(_mm256_max_ps(a[0], a[1]), _mm256_max_ps(a[2], a[3]));
    __m128 h = _mm_max_ps(_mm256_castps256_ps128(m), _mm256_extractf128_ps(m, 1));
    h = _mm_max_ps(h, _mm_movehl_ps(h, h));
    h = _mm_max_ss(h, _mm_shuffle_ps(h, h, 1));
    const float amax = _mm_cvtss_f32(h);
    // The first value of the largest magnitude keeps its sign; an all-zero block keeps the scalar path's +0.
    float max = 0.0f;
    if (amax > 0.0f) {
      const __m256 am = _mm256_set1_ps(amax);
      for (int k = 0; k < 4; ++k) {
        const int mask = _mm256_movemask_ps(_mm256_cmp_ps(a[k], am, _CMP_EQ_OQ));
        if (mask) {
          max = x[i + 8 * k + __builtin_ctz(static_cast<unsigned>(mask))];
          break;
        }
      }
    }
    const float d = max * -0.125f;  // max / -8, exactly: the same real result, so the same rounding
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    const __m256 vid = _mm256_set1_ps(id);
    // F16C's round to nearest even, subnormals included, as fp16_from_f32.
    const __m256 vd = _mm256_set1_ps(_mm_cvtss_f32(_mm_cvtph_ps(_mm_cvtps_ph(_mm_set_ss(d), _MM_FROUND_TO_NEAREST_INT))));
    const __m256 half = _mm256_set1_ps(8.5f), eight = _mm256_set1_ps(8.0f);
    const __m256i fifteen = _mm256_set1_epi32(15);
    for (int k = 0; k < 4; ++k) {
      const __m256i q = _mm256_min_epi32(_mm256_cvttps_epi32(_mm256_add_ps(_mm256_mul_ps(v[k], vid), half)), fifteen);
      _mm256_storeu_ps(out + i + 8 * k, _mm256_mul_ps(_mm256_sub_ps(_mm256_cvtepi32_ps(q), eight), vd));
    }
  }
}
#endif

}  // namespace

void q4_0_round_trip(const float * x, int64_t n, float * out) {
#ifdef RT_Q40_HAVE
  if (cpu_kernels_simd()) return round_trip_avx2(x, n, out);
#endif
  round_trip_scalar(x, n, out);
}

void q8_0_round_trip(const float * x, int64_t n, float * out) {
  for (int64_t i = 0; i + kQ4_0Block <= n; i += kQ4_0Block) {
    float amax = 0.0f;
    for (int j = 0; j < kQ4_0Block; ++j) amax = std::max(amax, std::fabs(x[i + j]));
    const float d = amax / 127.0f;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    const float dh = f32_from_fp16(fp16_from_f32(d));
    // Through an int, as ggml stores q: -0.4 gives +0, not -0.
    for (int j = 0; j < kQ4_0Block; ++j) out[i + j] = static_cast<float>(static_cast<int>(std::round(x[i + j] * id))) * dh;
  }
}

}  // namespace rt
