#include "cuda/moe-group.cuh"

#include "cuda/common.cuh"
#include "cuda/moe-group-block.cuh"

namespace {

__global__ void __launch_bounds__(RT_MOE_GROUP_THREADS)
    moe_group_kernel(const int * ids, int n_assign, int k, int n_experts, int * offsets, int * sorted, int * sorted_token,
                     int * active) {
  rt_cuda::follow_prior_grids();
  extern __shared__ int counts[];  // [n_experts] counts, then [n_experts] cursors
  rt_cuda::group_assignments(ids, n_assign, k, n_experts, counts, offsets, sorted, sorted_token, active);
}

__global__ void __launch_bounds__(RT_MOE_GROUP_THREADS)
    route_and_group_kernel(const float * logits, int n_tokens, int n_experts, int k, bool norm, int * ids,
                           float * weights, int * offsets, int * sorted, int * sorted_token, int * active) {
  rt_cuda::follow_prior_grids();
  extern __shared__ int smem[];
  rt_cuda::route_and_group_block(logits, n_tokens, n_experts, k, norm, ids, weights, offsets, sorted, sorted_token,
                                 active, smem);
}

size_t route_and_group_smem(int n_tokens, int n_experts, int k) {
  return rt_cuda::route_and_group_smem(n_tokens, n_experts, k, RT_MOE_GROUP_THREADS / 32);
}

}  // namespace

void rt_cuda_moe_group(const int * ids, int n_assign, int k, int n_experts, int * offsets, int * sorted,
                       int * sorted_token, int * active, cudaStream_t stream) {
  rt_cuda::launch("moe_group_kernel", moe_group_kernel, 1, RT_MOE_GROUP_THREADS, sizeof(int) * 2 * n_experts, stream,
                  ids, n_assign, k, n_experts, offsets, sorted, sorted_token, active);
  RT_CUDA_LAUNCH_CHECK();
}

bool rt_cuda_route_and_group_fits(int n_tokens, int n_experts, int k) {
  return n_tokens > 0 && n_tokens <= RT_ROUTE_AND_GROUP_MAX_TOKENS && route_and_group_smem(n_tokens, n_experts, k) <= 48 * 1024;
}

void rt_cuda_route_and_group(const float * logits, int n_tokens, int n_experts, int k, bool norm_topk_prob, int * ids,
                             float * weights, int * offsets, int * sorted, int * sorted_token, int * active,
                             cudaStream_t stream) {
  rt_cuda::launch("route_and_group_kernel", route_and_group_kernel, 1, RT_MOE_GROUP_THREADS,
                  route_and_group_smem(n_tokens, n_experts, k), stream, logits, n_tokens, n_experts, k, norm_topk_prob,
                  ids, weights, offsets, sorted, sorted_token, active);
  RT_CUDA_LAUNCH_CHECK();
}
