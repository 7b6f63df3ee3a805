#include "cuda/moe-group.cuh"

#include "cuda/common.cuh"
#include "cuda/router-topk-warp.cuh"

namespace {

// Counting sort of the block's assignments by expert; `counts` is 2 * n_experts ints of shared memory.
__device__ __forceinline__ void group_assignments(const int * ids, int n_assign, int k, int n_experts, int * counts,
                                                  int * offsets, int * sorted, int * sorted_token, int * active) {
  int * cursor = counts + n_experts;
  for (int e = threadIdx.x; e < n_experts; e += blockDim.x) counts[e] = 0;
  __syncthreads();
  for (int a = threadIdx.x; a < n_assign; a += blockDim.x) {
    const int e = ids[a];
    if (e >= 0 && e < n_experts) atomicAdd(&counts[e], 1);
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    int run = 0;
    int n_active = 0;
    for (int e = 0; e < n_experts; ++e) {
      offsets[e] = run;
      cursor[e] = run;
      run += counts[e];
      if (counts[e] > 0) active[n_active++] = e;
    }
    offsets[n_experts] = run;
    for (int e = n_active; e < n_experts; ++e) active[e] = -1;
  }
  __syncthreads();
  for (int a = threadIdx.x; a < n_assign; a += blockDim.x) {
    const int e = ids[a];
    if (e < 0 || e >= n_experts) continue;
    const int p = atomicAdd(&cursor[e], 1);
    sorted[p] = a;
    sorted_token[p] = a / k;
  }
}

__global__ void __launch_bounds__(RT_MOE_GROUP_THREADS)
    moe_group_kernel(const int * ids, int n_assign, int k, int n_experts, int * offsets, int * sorted, int * sorted_token,
                     int * active) {
  extern __shared__ int counts[];  // [n_experts] counts, then [n_experts] cursors
  group_assignments(ids, n_assign, k, n_experts, counts, offsets, sorted, sorted_token, active);
}

// Routing and grouping in one block: each warp routes tokens warp, warp + 32, ..., keeping the ids in shared memory
// for the grouping that follows the barrier.
__global__ void __launch_bounds__(RT_MOE_GROUP_THREADS)
    route_and_group_kernel(const float * logits, int n_tokens, int n_experts, int k, bool norm, int * ids,
                           float * weights, int * offsets, int * sorted, int * sorted_token, int * active) {
  extern __shared__ int smem[];  // [2 * n_experts] counts and cursors, [n_tokens * k] ids, [32 * n_experts] probs
  int * counts = smem;
  int * ids_s = smem + 2 * n_experts;
  float * probs = reinterpret_cast<float *>(ids_s + n_tokens * k) + (threadIdx.x >> 5) * n_experts;
  for (int t = threadIdx.x >> 5; t < n_tokens; t += blockDim.x >> 5) {
    rt_cuda::router_warp_topk(logits + static_cast<size_t>(t) * n_experts, n_experts, k, norm, probs, ids_s + t * k,
                              weights + t * k);
  }
  __syncthreads();
  for (int a = threadIdx.x; a < n_tokens * k; a += blockDim.x) ids[a] = ids_s[a];
  group_assignments(ids_s, n_tokens * k, k, n_experts, counts, offsets, sorted, sorted_token, active);
}

size_t route_and_group_smem(int n_tokens, int n_experts, int k) {
  return sizeof(int) * (2 * static_cast<size_t>(n_experts) + static_cast<size_t>(n_tokens) * k) +
         sizeof(float) * (RT_MOE_GROUP_THREADS / 32) * static_cast<size_t>(n_experts);
}

}  // namespace

void rt_cuda_moe_group(const int * ids, int n_assign, int k, int n_experts, int * offsets, int * sorted,
                       int * sorted_token, int * active, cudaStream_t stream) {
  moe_group_kernel<<<1, RT_MOE_GROUP_THREADS, sizeof(int) * 2 * n_experts, stream>>>(ids, n_assign, k, n_experts,
                                                                                     offsets, sorted, sorted_token, active);
  RT_CUDA_LAUNCH_CHECK();
}

bool rt_cuda_route_and_group_fits(int n_tokens, int n_experts, int k) {
  return n_tokens > 0 && n_tokens <= RT_ROUTE_AND_GROUP_MAX_TOKENS && route_and_group_smem(n_tokens, n_experts, k) <= 48 * 1024;
}

void rt_cuda_route_and_group(const float * logits, int n_tokens, int n_experts, int k, bool norm_topk_prob, int * ids,
                             float * weights, int * offsets, int * sorted, int * sorted_token, int * active,
                             cudaStream_t stream) {
  route_and_group_kernel<<<1, RT_MOE_GROUP_THREADS, route_and_group_smem(n_tokens, n_experts, k), stream>>>(
      logits, n_tokens, n_experts, k, norm_topk_prob, ids, weights, offsets, sorted, sorted_token, active);
  RT_CUDA_LAUNCH_CHECK();
}
