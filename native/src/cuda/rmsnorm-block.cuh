#pragma once
// One row's RMSNorm by one block (device code, for the .cu files only): rmsnorm.cu's kernel runs it, and so do the
// matmul tails and the MoE reduce, with the sums of a RT_RMSNORM_THREADS-thread block whatever their block size,
// so all of them give the same bits.
#include "cuda/common.cuh"
#include "cuda/rmsnorm.cuh"

namespace rt_cuda {

/** Sum of squares of x[0..n) as a V-thread block adds it; x read through L2 (__ldcg). */
template <int V>
__device__ __forceinline__ float sum_squares_as(const float * x, int n, float * scratch) {
  return virtual_block_sum<V>(
      [&](int vt) {
        float ss = 0.0f;
        for (int i = vt; i < n; i += V) {
          const float v = __ldcg(x + i);
          ss = fmaf(v, v, ss);
        }
        return ss;
      },
      scratch);
}

__device__ __forceinline__ float rmsnorm_sum_squares(const float * x, int n, float * scratch) {
  return sum_squares_as<RT_RMSNORM_THREADS>(x, n, scratch);
}

/** y = x * rsqrt(sum_squares / n + eps) * w into y16 (FP16) or else y32 (FP32, may alias x). */
__device__ __forceinline__ void rmsnorm_apply(const float * x, float sum_squares, const __half * w, float eps, int n,
                                              __half * y16, float * y32) {
  const float inv = rsqrtf(sum_squares / static_cast<float>(n) + eps);
  for (int i = threadIdx.x; i < n; i += blockDim.x) {
    const float v = __ldcg(x + i) * inv * __half2float(w[i]);
    if (y16 != nullptr) {
      y16[i] = __float2half_rn(v);
    } else {
      y32[i] = v;
    }
  }
}

__device__ __forceinline__ void rmsnorm_row(const float * x, const __half * w, float eps, int n, __half * y16,
                                            float * y32, float * scratch) {
  rmsnorm_apply(x, rmsnorm_sum_squares(x, n, scratch), w, eps, n, y16, y32);
}

}  // namespace rt_cuda
