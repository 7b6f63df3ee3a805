#pragma once
// Greedy argmax in one block (device code, for the .cu files only): argmax.cu's kernel runs argmax_row over a row,
// and the LM head's tail runs argmax_partial in every block over the rows it wrote, then argmax_of_partials in the
// last. Ties go to the lowest index whatever the block size or split, so every form gives the same answer.
#include "cuda/common.cuh"

namespace rt_cuda {

/** Folds value v at index i into a running (bv, bi, nan): NaN only sets the flag. */
__device__ __forceinline__ void argmax_take(float v, int i, float & bv, int & bi, int & nan) {
  if (isnan(v)) {
    nan = 1;
  } else if (argmax_better(v, i, bv, bi)) {
    bv = v;
    bi = i;
  }
}

/** The block's best (bv, bi) and NaN flag over every thread's; valid in thread 0. */
__device__ __forceinline__ void block_argmax(float & bv, int & bi, int & nan, int none) {
  __shared__ float sv[32];
  __shared__ int si[32];
  __shared__ int sn[32];
  __syncthreads();  // a tail's rows follow one another: the previous row's reads of sv/si/sn are over
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
    bi = lane < n_warps ? si[lane] : none;
    nan = lane < n_warps ? sn[lane] : 0;
    warp_argmax(bv, bi);
    for (int o = 16; o > 0; o >>= 1) nan |= __shfl_xor_sync(0xffffffffu, nan, o);
  }
}

/** *out = argmax of row[0..n_cols) (ties to the lowest index), or -1 when the row holds a NaN; any block size. */
__device__ __forceinline__ void argmax_row(const float * row, int n_cols, int * out) {
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
      if (i < n_cols) argmax_take(v[u], i, bv, bi, nan);
    }
  }
  block_argmax(bv, bi, nan, n_cols);
  if (threadIdx.x == 0) *out = nan ? -1 : (bi < n_cols ? bi : 0);
}

/**
 * A block's share of a row's argmax: its best over row[r0 .. r1) (rows this block wrote, visible to it after a
 * barrier) as (value bits, index), the index -1 when one of them is NaN and `none` when the range is empty.
 */
__device__ __forceinline__ void argmax_partial(const float * row, int r0, int r1, int none, int2 * out) {
  float bv = -INFINITY;
  int bi = none;
  int nan = 0;
  for (int i = r0 + static_cast<int>(threadIdx.x); i < r1; i += static_cast<int>(blockDim.x)) {
    argmax_take(__ldcg(row + i), i, bv, bi, nan);
  }
  block_argmax(bv, bi, nan, none);
  if (threadIdx.x == 0) *out = make_int2(__float_as_int(bv), nan ? -1 : bi);
}

/** *out from n partials (argmax_partial's): -1 when any saw a NaN, else the best index (0 for none of n_cols). */
__device__ __forceinline__ void argmax_of_partials(const int2 * partials, int n, int n_cols, int * out) {
  float bv = -INFINITY;
  int bi = n_cols;
  int nan = 0;
  for (int i = static_cast<int>(threadIdx.x); i < n; i += static_cast<int>(blockDim.x)) {
    const int2 p = __ldcg(partials + i);
    if (p.y < 0) {
      nan = 1;
    } else {
      argmax_take(__int_as_float(p.x), p.y, bv, bi, nan);
    }
  }
  block_argmax(bv, bi, nan, n_cols);
  if (threadIdx.x == 0) *out = nan ? -1 : (bi < n_cols ? bi : 0);
}

}  // namespace rt_cuda
