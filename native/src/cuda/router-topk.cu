#include "cuda/router-topk.cuh"

#include "cuda/common.cuh"

namespace {

__global__ void router_kernel(const float * logits, int n_tokens, int n_experts, int k, bool norm, int * ids,
                              float * weights) {
  extern __shared__ float probs_all[];
  const int warp = threadIdx.x >> 5;
  const int lane = threadIdx.x & 31;
  const int t = blockIdx.x * RT_ROUTER_WARPS + warp;
  if (t >= n_tokens) return;
  float * probs = probs_all + warp * n_experts;
  const float * row = logits + static_cast<size_t>(t) * n_experts;
  float m = -INFINITY;
  for (int e = lane; e < n_experts; e += 32) m = fmaxf(m, row[e]);
  m = rt_cuda::warp_max(m);
  float s = 0.0f;
  for (int e = lane; e < n_experts; e += 32) {
    const float p = expf(row[e] - m);
    probs[e] = p;
    s += p;
  }
  s = rt_cuda::warp_sum(s);
  for (int e = lane; e < n_experts; e += 32) probs[e] /= s;
  __syncwarp();
  float picked_sum = 0.0f;
  for (int j = 0; j < k; ++j) {
    float bv = -1.0f;
    int bi = n_experts;
    for (int e = lane; e < n_experts; e += 32) {
      const float p = probs[e];
      if (p > bv || (p == bv && e < bi)) {
        bv = p;
        bi = e;
      }
    }
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) {
      const float ov = __shfl_xor_sync(0xffffffffu, bv, o);
      const int oi = __shfl_xor_sync(0xffffffffu, bi, o);
      if (ov > bv || (ov == bv && oi < bi)) {
        bv = ov;
        bi = oi;
      }
    }
    if (lane == 0) {
      ids[t * k + j] = bi;
      weights[t * k + j] = bv;
      // With NaN logits nothing is picked (bi == n_experts, an id the expert kernels skip): no row to mark.
      if (bi < n_experts) probs[bi] = -2.0f;
    }
    picked_sum += bv;
    __syncwarp();
  }
  if (norm && lane < k) weights[t * k + lane] /= picked_sum;
}

}  // namespace

void rt_cuda_router_topk(const float * logits, int n_tokens, int n_experts, int k, bool norm_topk_prob, int * ids,
                         float * weights, cudaStream_t stream) {
  if (n_tokens <= 0) return;
  const int blocks = (n_tokens + RT_ROUTER_WARPS - 1) / RT_ROUTER_WARPS;
  const size_t smem = sizeof(float) * RT_ROUTER_WARPS * n_experts;
  router_kernel<<<blocks, RT_ROUTER_WARPS * 32, smem, stream>>>(logits, n_tokens, n_experts, k, norm_topk_prob, ids,
                                                                 weights);
  RT_CUDA_LAUNCH_CHECK();
}
