#pragma once
// One token's MoE reduce by one block (device code, for the .cu files only): moe-reduce.cu's kernel runs it, and so
// does the down projection's tail, with the sums of a RT_RMSNORM_THREADS-thread block whatever their block size.
#include "cuda/common.cuh"
#include "cuda/rmsnorm-block.cuh"

namespace rt_cuda {

/** Token t of rt_cuda_moe_reduce: x[t] += its k weighted expert rows of z, then y[t] = rmsnorm(x[t]) if norm_w. */
__device__ __forceinline__ void moe_reduce_token(const float * z, const float * weights, int k, int hidden, float * x,
                                                 const __half * norm_w, float eps, __half * y, int t, float * scratch) {
  float * xr = x + static_cast<size_t>(t) * hidden;
  const float * wt = weights + static_cast<size_t>(t) * k;
  const float * zt = z + static_cast<size_t>(t) * k * hidden;
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
