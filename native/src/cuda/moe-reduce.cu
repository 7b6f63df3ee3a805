#include "cuda/moe-reduce.cuh"

#include "cuda/common.cuh"
#include "cuda/moe-reduce-block.cuh"
#include "cuda/rmsnorm.cuh"

namespace {

__global__ void __launch_bounds__(RT_RMSNORM_THREADS)
    moe_reduce_kernel(const float * z, const float * weights, int k, int hidden, float * x, const __half * norm_w,
                      float eps, __half * y) {
  rt_cuda::follow_prior_grids();
  __shared__ float scratch[32];
  rt_cuda::moe_reduce_token(z, weights, k, hidden, x, norm_w, eps, y, blockIdx.x, scratch);
}

}  // namespace

void rt_cuda_moe_reduce(const float * z, const float * weights, int n_tokens, int k, int hidden, float * x,
                        const __half * norm_w, float eps, __half * y, cudaStream_t stream) {
  if (n_tokens <= 0) return;
  rt_cuda::launch("moe_reduce_kernel", moe_reduce_kernel, n_tokens, RT_RMSNORM_THREADS, 0, stream, z, weights, k,
                  hidden, x, norm_w, eps, y);
  RT_CUDA_LAUNCH_CHECK();
}
