#pragma once
// One row's RMSNorm by one block (device code, for the .cu files only): rmsnorm.cu's kernel runs it, and so do the
// matmul tails and the MoE reduce, with the sums of a RT_RMSNORM_THREADS-thread block whatever their block size,
// so all of them give the same bits.
//
// A tail runs in a block of TAIL_THREADS threads, each playing V / TAIL_THREADS of the V virtual threads; done one
// virtual thread after another, each load would wait for the one before. So for rows of up to TAIL_MAX_COLS values
// a tail thread first loads all of its values (one round of loads in flight), then adds them in each virtual
// thread's order.
#include "cuda/common.cuh"
#include "cuda/rmsnorm.cuh"

namespace rt_cuda {

constexpr int TAIL_THREADS = 128;
constexpr int TAIL_MAX_COLS = 2048;
constexpr int TAIL_VALUES = TAIL_MAX_COLS / TAIL_THREADS;  // a tail thread's share of such a row

/** virtual_block_sum from the parts already computed: parts[m] is virtual thread threadIdx.x + m B's (B threads). */
template <int V, int B>
__device__ __forceinline__ float virtual_block_sum_parts(const float (&parts)[V / B], float * scratch) {
  const int lane = threadIdx.x & 31;
  __syncthreads();
#pragma unroll
  for (int m = 0; m < V / B; ++m) {
    const float v = warp_sum(parts[m]);
    if (lane == 0) scratch[(threadIdx.x >> 5) + m * (B / 32)] = v;
  }
  __syncthreads();
  return warp_sum(lane < V / 32 ? scratch[lane] : 0.0f);
}

/** This tail thread's share of a row of n <= TAIL_MAX_COLS values: vals[q] = x[threadIdx.x + TAIL_THREADS q], 0 past n. */
__device__ __forceinline__ void load_row_share(const float * x, int n, float (&vals)[TAIL_VALUES]) {
#pragma unroll
  for (int q = 0; q < TAIL_VALUES; ++q) {
    const int i = static_cast<int>(threadIdx.x) + TAIL_THREADS * q;
    vals[q] = i < n ? __ldcg(x + i) : 0.0f;
  }
}

/**
 * Sum of squares of a row held as load_row_share leaves it, as a V-thread block adds it: virtual thread
 * threadIdx.x + TAIL_THREADS m takes q = m, m + V / TAIL_THREADS, ... in that order (the zeros past the row add
 * nothing to a non-negative sum).
 */
template <int V>
__device__ __forceinline__ float sum_squares_held(const float (&vals)[TAIL_VALUES], float * scratch) {
  constexpr int M = V / TAIL_THREADS;
  float parts[M];
#pragma unroll
  for (int m = 0; m < M; ++m) parts[m] = 0.0f;
#pragma unroll
  for (int q = 0; q < TAIL_VALUES; ++q) parts[q % M] = fmaf(vals[q], vals[q], parts[q % M]);
  return virtual_block_sum_parts<V, TAIL_THREADS>(parts, scratch);
}

/** Whether this block takes the loaded form for a row of n values. */
__device__ __forceinline__ bool row_fits_tail(int n) { return blockDim.x == TAIL_THREADS && n <= TAIL_MAX_COLS; }

/** Sum of squares of x[0..n) as a V-thread block adds it; x read through L2 (__ldcg). */
template <int V>
__device__ __forceinline__ float sum_squares_as(const float * x, int n, float * scratch) {
  if (row_fits_tail(n)) {
    float vals[TAIL_VALUES];
    load_row_share(x, n, vals);
    return sum_squares_held<V>(vals, scratch);
  }
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

/** rmsnorm_apply over a row held as load_row_share leaves it (FP16 output). */
__device__ __forceinline__ void rmsnorm_apply_held(const float (&vals)[TAIL_VALUES], float sum_squares,
                                                   const __half * w, float eps, int n, __half * y16) {
  const float inv = rsqrtf(sum_squares / static_cast<float>(n) + eps);
#pragma unroll
  for (int q = 0; q < TAIL_VALUES; ++q) {
    const int i = static_cast<int>(threadIdx.x) + TAIL_THREADS * q;
    if (i < n) y16[i] = __float2half_rn(vals[q] * inv * __half2float(w[i]));
  }
}

__device__ __forceinline__ void rmsnorm_row(const float * x, const __half * w, float eps, int n, __half * y16,
                                            float * y32, float * scratch) {
  if (y16 != nullptr && row_fits_tail(n)) {
    float vals[TAIL_VALUES];
    load_row_share(x, n, vals);
    rmsnorm_apply_held(vals, sum_squares_held<RT_RMSNORM_THREADS>(vals, scratch), w, eps, n, y16);
    return;
  }
  rmsnorm_apply(x, sum_squares_as<RT_RMSNORM_THREADS>(x, n, scratch), w, eps, n, y16, y32);
}

}  // namespace rt_cuda
