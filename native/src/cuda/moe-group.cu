#include "cuda/moe-group.cuh"

#include "cuda/common.cuh"

namespace {

__global__ void __launch_bounds__(RT_MOE_GROUP_THREADS)
    moe_group_kernel(const int * ids, int n_assign, int k, int n_experts, int * offsets, int * sorted, int * sorted_token,
                     int * active) {
  extern __shared__ int counts[];  // [n_experts] counts, then [n_experts] cursors
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

}  // namespace

void rt_cuda_moe_group(const int * ids, int n_assign, int k, int n_experts, int * offsets, int * sorted,
                       int * sorted_token, int * active, cudaStream_t stream) {
  moe_group_kernel<<<1, RT_MOE_GROUP_THREADS, sizeof(int) * 2 * n_experts, stream>>>(ids, n_assign, k, n_experts,
                                                                                     offsets, sorted, sorted_token, active);
  RT_CUDA_LAUNCH_CHECK();
}
