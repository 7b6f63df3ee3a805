#pragma once
// Routing and grouping by one block (device code, for the .cu files only): moe-group.cu's kernels run them, and so
// does the router projection's tail.
#include "cuda/common.cuh"
#include "cuda/router-topk-warp.cuh"

namespace rt_cuda {

/** Shared memory of route_and_group_block for a block of `warps` warps. */
__host__ __device__ inline size_t route_and_group_smem(int n_tokens, int n_experts, int k, int warps) {
  return sizeof(int) * (2 * static_cast<size_t>(n_experts) + static_cast<size_t>(n_tokens) * k) +
         sizeof(float) * static_cast<size_t>(warps) * n_experts;
}

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

/**
 * Routes tokens 0..n_tokens (logits rows of n_experts) warp by warp, then groups the assignments when `offsets` is
 * set (else only ids and weights). `smem` holds route_and_group_smem(n_tokens, n_experts, k, warps of the block).
 */
__device__ __forceinline__ void route_and_group_block(const float * logits, int n_tokens, int n_experts, int k,
                                                      bool norm, int * ids, float * weights, int * offsets, int * sorted,
                                                      int * sorted_token, int * active, int * smem) {
  int * counts = smem;
  int * ids_s = smem + 2 * n_experts;
  float * probs = reinterpret_cast<float *>(ids_s + n_tokens * k) + (threadIdx.x >> 5) * n_experts;
  for (int t = threadIdx.x >> 5; t < n_tokens; t += blockDim.x >> 5) {
    router_warp_topk(logits + static_cast<size_t>(t) * n_experts, n_experts, k, norm, probs, ids_s + t * k,
                     weights + t * k);
  }
  __syncthreads();
  for (int a = threadIdx.x; a < n_tokens * k; a += blockDim.x) ids[a] = ids_s[a];
  if (offsets != nullptr) group_assignments(ids_s, n_tokens * k, k, n_experts, counts, offsets, sorted, sorted_token, active);
}

}  // namespace rt_cuda
