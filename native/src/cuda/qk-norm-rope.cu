#include "cuda/qk-norm-rope.cuh"

#include "cuda/common.cuh"
#include "cuda/qk-norm-rope-block.cuh"

namespace {

__global__ void __launch_bounds__(RT_QK_NORM_ROPE_THREADS) qk_norm_rope_kernel(rt_cuda_qk_norm_rope_args a) {
  rt_cuda::follow_prior_grids();
  __shared__ float scratch[32];
  rt_cuda::qk_norm_rope_token(a, blockIdx.x, scratch);
}

}  // namespace

void rt_cuda_qk_norm_rope(const rt_cuda_qk_norm_rope_args & a, cudaStream_t stream) {
  if (a.n_tokens <= 0) return;
  rt_cuda::launch("qk_norm_rope_kernel", qk_norm_rope_kernel, a.n_tokens, RT_QK_NORM_ROPE_THREADS, 0, stream, a);
  RT_CUDA_LAUNCH_CHECK();
}
