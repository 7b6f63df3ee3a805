#pragma once
// Device helpers the W4A16 kernels share: which group a block computes and the SwiGLU epilogue.
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include "cuda/matmul-w4a16.cuh"

namespace rt_cuda {

/** The group of grid row `y` (-1: none) and its entry range. */
__device__ __forceinline__ int w4a16_group(const rt_cuda_w4a16_args & a, int y, int & begin, int & end) {
  const int g = a.active != nullptr ? a.active[y] : y;
  if (g < 0) return -1;
  if (a.offsets != nullptr) {
    begin = a.offsets[g];
    end = a.offsets[g + 1];
  } else {
    begin = 0;
    end = a.n_entries;
  }
  return g;
}

/** The SwiGLU epilogue's value, as rt_cuda_swiglu stores it. */
__device__ __forceinline__ __half swiglu_value(float gate, float up) {
  return __float2half_rn(gate / (1.0f + expf(-gate)) * up);
}

/** y row of entry e. */
__device__ __forceinline__ int out_row(const rt_cuda_w4a16_args & a, int e) { return a.rows_out != nullptr ? a.rows_out[e] : e; }
/** x row of entry e. */
__device__ __forceinline__ int in_row(const rt_cuda_w4a16_args & a, int e) { return a.rows_in != nullptr ? a.rows_in[e] : e; }

}  // namespace rt_cuda
