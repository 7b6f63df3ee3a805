#pragma once
// Helpers shared by the CUDA kernels: error checks, warp/block reductions and the padded activation layout used by
// the matmul kernels (4 floats of padding after every 32 so that 16-byte lane reads hit distinct banks).
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <initializer_list>

#include "cuda/launch.cuh"

#define RT_CUDA_LAUNCH_CHECK() rt_cuda_check_launch(__FILE__, __LINE__)

void rt_cuda_check_launch(const char * file, int line);

/** Lets `kernel` use `bytes` of dynamic shared memory per block on the current device (once per device and size). */
void rt_cuda_allow_smem(const void * kernel, size_t bytes);
/** Lets `kernels` use the current device's opt-in shared memory per block, and returns that amount. */
int rt_cuda_allow_optin_smem(std::initializer_list<const void *> kernels);

namespace rt_cuda {

constexpr int WARP = 32;

/** Streaming multiprocessors of the device that launches next (asked of the runtime once per device). */
int sm_count();
/** Bytes of L2 cache of the device that launches next (0 where the runtime cannot say). */
int l2_bytes();

__device__ __forceinline__ float warp_sum(float v) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}

/** Whether (v, i) beats (bv, bi) for an argmax: larger, or equal at a lower index. */
__device__ __forceinline__ bool argmax_better(float v, int i, float bv, int bi) { return v > bv || (v == bv && i < bi); }

/** Argmax over a warp of each lane's best (bv, bi), ties to the lower index; every lane gets the result. */
__device__ __forceinline__ void warp_argmax(float & bv, int & bi) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) {
    const float ov = __shfl_xor_sync(0xffffffffu, bv, o);
    const int oi = __shfl_xor_sync(0xffffffffu, bi, o);
    if (argmax_better(ov, oi, bv, bi)) {
      bv = ov;
      bi = oi;
    }
  }
}

__device__ __forceinline__ float warp_max(float v) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}

/** Sum over a block of at most 1024 threads; `scratch` holds 32 floats. Every thread gets the result. */
__device__ __forceinline__ float block_sum(float v, float * scratch) {
  const int lane = threadIdx.x & 31;
  const int warp = threadIdx.x >> 5;
  v = warp_sum(v);
  __syncthreads();
  if (lane == 0) scratch[warp] = v;
  __syncthreads();
  const int n_warps = (blockDim.x + 31) >> 5;
  v = lane < n_warps ? scratch[lane] : 0.0f;
  return warp_sum(v);
}

__device__ __forceinline__ float block_max(float v, float * scratch) {
  const int lane = threadIdx.x & 31;
  const int warp = threadIdx.x >> 5;
  v = warp_max(v);
  __syncthreads();
  if (lane == 0) scratch[warp] = v;
  __syncthreads();
  const int n_warps = (blockDim.x + 31) >> 5;
  v = lane < n_warps ? scratch[lane] : -INFINITY;
  return warp_max(v);
}

/**
 * The sum block_sum gives in a block of V threads when virtual thread vt contributes part(vt): the same additions in
 * the same order, so a tail fused into a launch of another block size (V a multiple of it) matches the V-thread
 * kernel bit for bit. `scratch` holds 32 floats; every thread gets the result.
 */
template <int V, typename F>
__device__ __forceinline__ float virtual_block_sum(F part, float * scratch) {
  static_assert(V % 32 == 0 && V <= 1024, "virtual block size");
  const int lane = threadIdx.x & 31;
  const int warps = static_cast<int>(blockDim.x) >> 5;
  __syncthreads();
  for (int m = 0; m * static_cast<int>(blockDim.x) < V; ++m) {
    const float v = warp_sum(part(static_cast<int>(threadIdx.x) + m * static_cast<int>(blockDim.x)));
    if (lane == 0) scratch[(threadIdx.x >> 5) + m * warps] = v;
  }
  __syncthreads();
  return warp_sum(lane < V / 32 ? scratch[lane] : 0.0f);
}

/**
 * Whether this block is the last of the launch's `count` blocks to arrive here (the same answer in all its threads);
 * every thread of every counted block must call it once. The last block may then read, through loads that bypass L1
 * (__ldcg), all that the others wrote before arriving: this is how a launch runs the step's next small kernel as its
 * tail instead of paying a launch for it. The counter (zero before the launch) is zero again after it.
 */
__device__ __forceinline__ bool last_block_arrived(unsigned * counter, unsigned count) {
  __shared__ unsigned arrived;
  __threadfence();
  __syncthreads();
  if (threadIdx.x == 0) {
    arrived = atomicAdd(counter, 1u);
    if (arrived == count - 1) atomicExch(counter, 0u);
  }
  __syncthreads();
  const bool last = arrived == count - 1;
  if (last) __threadfence();
  return last;
}

/**
 * The matmul kernels' epilogue: each lane holds partial dot products of R rows (from row0) for nt tokens (from
 * chunk); sums them over the warp and lane 0 writes (or adds) y[token's output row][row].
 */
template <int R, int TB>
__device__ __forceinline__ void store_warp_rows(const float (&acc)[R][TB], int nt, int row0, int rows, int chunk,
                                                const int * rows_out, float * y, int ldy, bool accumulate) {
  const int lane = threadIdx.x & 31;
#pragma unroll
  for (int r = 0; r < R; ++r) {
#pragma unroll
    for (int j = 0; j < TB; ++j) {
      if (j < nt) {
        const float v = warp_sum(acc[r][j]);
        const int row = row0 + r;
        if (lane == 0 && row < rows) {
          const int yr = rows_out != nullptr ? rows_out[chunk + j] : chunk + j;
          float * dst = y + static_cast<size_t>(yr) * ldy + row;
          *dst = accumulate ? *dst + v : v;
        }
      }
    }
  }
}

/** Eight FP16 activations from `p` (16-byte aligned) as floats. */
__device__ __forceinline__ void load_x8(const __half * p, float (&xv)[8]) {
  const uint4 raw = __ldg(reinterpret_cast<const uint4 *>(p));
  const __half2 * h = reinterpret_cast<const __half2 *>(&raw);
#pragma unroll
  for (int k = 0; k < 4; ++k) {
    const float2 f = __half22float2(h[k]);
    xv[2 * k] = f.x;
    xv[2 * k + 1] = f.y;
  }
}

/** Index of column `c` in a padded shared-memory activation row. */
__host__ __device__ __forceinline__ int padded_col(int c) { return c + (c >> 5) * 4; }
/** Floats per padded activation row of `n` columns. */
__host__ __device__ __forceinline__ int padded_len(int n) { return n + ((n + 31) >> 5) * 4; }

}  // namespace rt_cuda
