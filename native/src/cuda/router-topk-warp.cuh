#pragma once
// One warp's routing of one token (device code, for the .cu files only): the router kernel runs it per token, the
// fused route-and-group kernel of moe-group.cu too, so both give the same ids and weights bit for bit.
#include "cuda/common.cuh"

namespace rt_cuda {

/**
 * Softmax of `row` (n_experts logits, read through L2) in FP32 into `probs` (the warp's own n_experts floats, overwritten), then the
 * top-k probabilities, ties to the lower index, renormalised when `norm`; lane 0 writes ids[j] and weights[j].
 * With NaN logits nothing is picked: the id is n_experts, which the expert kernels and the grouping skip.
 */
__device__ __forceinline__ void router_warp_topk(const float * row, int n_experts, int k, bool norm, float * probs,
                                                 int * ids, float * weights) {
  const int lane = threadIdx.x & 31;
  float m = -INFINITY;
  for (int e = lane; e < n_experts; e += 32) m = fmaxf(m, __ldcg(row + e));
  m = warp_max(m);
  float s = 0.0f;
  for (int e = lane; e < n_experts; e += 32) {
    const float p = expf(__ldcg(row + e) - m);
    probs[e] = p;
    s += p;
  }
  s = warp_sum(s);
  for (int e = lane; e < n_experts; e += 32) probs[e] /= s;
  float picked_sum = 0.0f;
  for (int j = 0; j < k; ++j) {
    float bv = -1.0f;
    int bi = n_experts;
    for (int e = lane; e < n_experts; e += 32) {
      const float p = probs[e];
      if (argmax_better(p, e, bv, bi)) {
        bv = p;
        bi = e;
      }
    }
    warp_argmax(bv, bi);
    if (lane == 0) {
      ids[j] = bi;
      weights[j] = bv;
    }
    // Marked by the lane that reads it (e = lane + 32 i): probs stay lane-private, so no lane writes what another has
    // just read with only shuffles in between (a race in CUDA's memory model, and a racecheck hazard).
    if (bi < n_experts && (bi & 31) == lane) probs[bi] = -2.0f;  // no row to mark after NaN logits
    picked_sum += bv;
    __syncwarp();
  }
  if (norm && lane < k) weights[lane] /= picked_sum;
}

}  // namespace rt_cuda
