#pragma once
// One token's MoE reduce by one block (device code, for the .cu files only): moe-reduce.cu's kernel runs it, and so
// does the down projection's tail, with the sums of a RT_RMSNORM_THREADS-thread block whatever their block size.
#include "cuda/common.cuh"
#include "cuda/rmsnorm-block.cuh"

namespace rt_cuda {

// moe_reduce_token in a tail's block (row_fits_tail): a thread's columns four at a time, their 4 k expert values
// and residuals loaded before any is added; each column's sum, and each virtual thread's sum of squares, in the
// order moe_reduce_token's loop takes them.
__device__ __forceinline__ void moe_reduce_token_held(const float * wt, const float * zt, int k, int hidden, float * xr,
                                                      const __half * norm_w, float eps, __half * yr, float * scratch) {
  constexpr int CHUNK = 4;
  constexpr int M = RT_RMSNORM_THREADS / TAIL_THREADS;
  float vals[TAIL_VALUES];
  float parts[M];
#pragma unroll
  for (int m = 0; m < M; ++m) parts[m] = 0.0f;
#pragma unroll
  for (int q0 = 0; q0 < TAIL_VALUES; q0 += CHUNK) {
    float s[CHUNK], xv[CHUNK];
#pragma unroll
    for (int u = 0; u < CHUNK; ++u) {
      const int c = static_cast<int>(threadIdx.x) + TAIL_THREADS * (q0 + u);
      s[u] = 0.0f;
      xv[u] = c < hidden ? xr[c] : 0.0f;
    }
    if (static_cast<int>(threadIdx.x) + TAIL_THREADS * q0 < hidden) {
#pragma unroll 8
      for (int j = 0; j < k; ++j) {
        const float w = __ldcg(wt + j);
#pragma unroll
        for (int u = 0; u < CHUNK; ++u) {
          const int c = static_cast<int>(threadIdx.x) + TAIL_THREADS * (q0 + u);
          if (c < hidden) s[u] = fmaf(w, __ldcg(zt + static_cast<size_t>(j) * hidden + c), s[u]);
        }
      }
    }
#pragma unroll
    for (int u = 0; u < CHUNK; ++u) {
      const int q = q0 + u;
      const int c = static_cast<int>(threadIdx.x) + TAIL_THREADS * q;
      vals[q] = c < hidden ? xv[u] + s[u] : 0.0f;
      if (c < hidden) xr[c] = vals[q];
      parts[q % M] = fmaf(vals[q], vals[q], parts[q % M]);
    }
  }
  if (norm_w == nullptr) return;  // uniform over the block: no thread waits at a barrier without the others
  rmsnorm_apply_held(vals, virtual_block_sum_parts<RT_RMSNORM_THREADS, TAIL_THREADS>(parts, scratch), norm_w, eps,
                     hidden, yr);
}

/** Token t of rt_cuda_moe_reduce: x[t] += its k weighted expert rows of z, then y[t] = rmsnorm(x[t]) if norm_w. */
__device__ __forceinline__ void moe_reduce_token(const float * z, const float * weights, int k, int hidden, float * x,
                                                 const __half * norm_w, float eps, __half * y, int t, float * scratch) {
  float * xr = x + static_cast<size_t>(t) * hidden;
  const float * wt = weights + static_cast<size_t>(t) * k;
  const float * zt = z + static_cast<size_t>(t) * k * hidden;
  if (row_fits_tail(hidden)) {
    moe_reduce_token_held(wt, zt, k, hidden, xr, norm_w, eps, norm_w != nullptr ? y + static_cast<size_t>(t) * hidden : nullptr,
                          scratch);
    return;
  }
  // Columns strided as RT_RMSNORM_THREADS threads would take them, so the sum of squares is the norm's own.
  const float ss = virtual_block_sum<RT_RMSNORM_THREADS>(
      [&](int vt) {
        float part = 0.0f;
        for (int c = vt; c < hidden; c += RT_RMSNORM_THREADS) {
          float s = 0.0f;
          // Unrolled so the k loads are in flight together rather than one memory latency after another.
#pragma unroll 8
          for (int j = 0; j < k; ++j) s = fmaf(__ldcg(wt + j), __ldcg(zt + static_cast<size_t>(j) * hidden + c), s);
          const float v = xr[c] + s;
          xr[c] = v;
          part = fmaf(v, v, part);
        }
        return part;
      },
      scratch);
  if (norm_w == nullptr) return;
  rmsnorm_apply(xr, ss, norm_w, eps, hidden, y + static_cast<size_t>(t) * hidden, nullptr);
}

}  // namespace rt_cuda
