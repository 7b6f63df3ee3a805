#include "cuda/router-topk.cuh"

#include "cuda/common.cuh"
#include "cuda/router-topk-warp.cuh"

namespace {

__global__ void router_kernel(const float * logits, int n_tokens, int n_experts, int k, bool norm, int * ids,
                              float * weights) {
  rt_cuda::follow_prior_grids();
  extern __shared__ float probs_all[];
  const int warp = threadIdx.x >> 5;
  const int t = blockIdx.x * RT_ROUTER_WARPS + warp;
  if (t >= n_tokens) return;
  rt_cuda::router_warp_topk(logits + static_cast<size_t>(t) * n_experts, n_experts, k, norm,
                            probs_all + warp * n_experts, ids + t * k, weights + t * k);
}

}  // namespace

void rt_cuda_router_topk(const float * logits, int n_tokens, int n_experts, int k, bool norm_topk_prob, int * ids,
                         float * weights, cudaStream_t stream) {
  if (n_tokens <= 0) return;
  const int blocks = (n_tokens + RT_ROUTER_WARPS - 1) / RT_ROUTER_WARPS;
  const size_t smem = sizeof(float) * RT_ROUTER_WARPS * n_experts;
  rt_cuda::launch("router_kernel", router_kernel, blocks, RT_ROUTER_WARPS * 32, smem, stream, logits, n_tokens,
                  n_experts, k, norm_topk_prob, ids, weights);
  RT_CUDA_LAUNCH_CHECK();
}
