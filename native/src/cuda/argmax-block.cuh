#pragma once
// One row's greedy argmax by one block (device code, for the .cu files only): argmax.cu's kernel runs it, and so does
// the LM head's tail. Ties go to the lowest index whatever the block size, so both give the same answer.
#include "cuda/common.cuh"

namespace rt_cuda {

/** *out = argmax of row[0..n_cols) (ties to the lowest index), or -1 when the row holds a NaN; any block size. */
__device__ __forceinline__ void argmax_row(const float * row, int n_cols, int * out) {
  __shared__ float sv[32];
  __shared__ int si[32];
  __shared__ int sn[32];
  __syncthreads();  // a tail's rows follow one another: the previous row's reads of sv/si/sn are over
  float bv = -INFINITY;
  int bi = n_cols;
  int nan = 0;
  // One block a row (a batch-1 step has one row): four independent loads in flight per thread, since a loop of one
  // load at a time waits out the memory latency once per element (81 us for OLMoE's 50,304 logits with 256 threads).
  constexpr int UNROLL = 4;
  const int stride = blockDim.x * UNROLL;
  for (int base = threadIdx.x; base < n_cols; base += stride) {
    float v[UNROLL];
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) {
      const int i = base + u * static_cast<int>(blockDim.x);
      v[u] = i < n_cols ? __ldcg(row + i) : -INFINITY;
    }
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) {
      const int i = base + u * static_cast<int>(blockDim.x);
      if (i >= n_cols) continue;
      if (isnan(v[u])) {
        nan = 1;
      } else if (argmax_better(v[u], i, bv, bi)) {
        bv = v[u];
        bi = i;
      }
    }
  }
  warp_argmax(bv, bi);
  for (int o = 16; o > 0; o >>= 1) nan |= __shfl_xor_sync(0xffffffffu, nan, o);
  const int lane = threadIdx.x & 31;
  const int warp = threadIdx.x >> 5;
  if (lane == 0) {
    sv[warp] = bv;
    si[warp] = bi;
    sn[warp] = nan;
  }
  __syncthreads();
  if (warp == 0) {
    const int n_warps = blockDim.x >> 5;
    bv = lane < n_warps ? sv[lane] : -INFINITY;
    bi = lane < n_warps ? si[lane] : n_cols;
    nan = lane < n_warps ? sn[lane] : 0;
    warp_argmax(bv, bi);
    for (int o = 16; o > 0; o >>= 1) nan |= __shfl_xor_sync(0xffffffffu, nan, o);
    if (lane == 0) *out = nan ? -1 : (bi < n_cols ? bi : 0);
  }
}

}  // namespace rt_cuda
