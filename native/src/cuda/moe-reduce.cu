#include "cuda/moe-reduce.cuh"

#include "cuda/common.cuh"
#include "cuda/rmsnorm.cuh"

namespace {

// RT_RMSNORM_THREADS threads, columns strided as in rmsnorm_kernel, so each thread's partial sum of squares and the
// block reduction are the same operations in the same order: the fused norm equals the separate one exactly.
__global__ void __launch_bounds__(RT_RMSNORM_THREADS)
    moe_reduce_kernel(const float * z, const float * weights, int k, int hidden, float * x, const __half * norm_w,
                      float eps, __half * y) {
  __shared__ float scratch[32];
  const int t = blockIdx.x;
  float * xr = x + static_cast<size_t>(t) * hidden;
  float ss = 0.0f;
  for (int c = threadIdx.x; c < hidden; c += blockDim.x) {
    float s = 0.0f;
    // Unrolled so the k loads are in flight together rather than one memory latency after another.
#pragma unroll 8
    for (int j = 0; j < k; ++j) s = fmaf(weights[t * k + j], z[(static_cast<size_t>(t) * k + j) * hidden + c], s);
    const float v = xr[c] + s;
    xr[c] = v;
    ss = fmaf(v, v, ss);
  }
  if (norm_w == nullptr) return;  // uniform over the block: no thread waits at the barrier below without the others
  ss = rt_cuda::block_sum(ss, scratch);
  const float inv = rsqrtf(ss / static_cast<float>(hidden) + eps);
  __half * yr = y + static_cast<size_t>(t) * hidden;
  for (int c = threadIdx.x; c < hidden; c += blockDim.x) yr[c] = __float2half_rn(xr[c] * inv * __half2float(norm_w[c]));
}

}  // namespace

void rt_cuda_moe_reduce(const float * z, const float * weights, int n_tokens, int k, int hidden, float * x,
                        const __half * norm_w, float eps, __half * y, cudaStream_t stream) {
  if (n_tokens <= 0) return;
  moe_reduce_kernel<<<n_tokens, RT_RMSNORM_THREADS, 0, stream>>>(z, weights, k, hidden, x, norm_w, eps, y);
  RT_CUDA_LAUNCH_CHECK();
}
