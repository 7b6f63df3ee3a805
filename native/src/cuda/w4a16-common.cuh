#pragma once
// Device helpers the W4A16 kernels share: which group a block computes and the SwiGLU epilogue.
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <type_traits>

#include "cuda/matmul-w4a16.cuh"

namespace rt_cuda {

/** Word i (0..3) of a 16-byte load. */
__device__ __forceinline__ uint32_t word(const uint4 & v, int i) { return i == 0 ? v.x : i == 1 ? v.y : i == 2 ? v.z : v.w; }

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

/**
 * The group scales of the four 8-column words from column c of a row (`srow`: the row's scales), as floats or FP16
 * pairs; zero for a padding row (`ok` false). With `one_scale` (group_size a multiple of 32) one load serves all four.
 */
template <typename T>
__device__ __forceinline__ void word_scales(const __half * srow, int c, int group_size, bool one_scale, bool ok, T (&s)[4]) {
  const auto as = [](__half h) {
    if constexpr (std::is_same<T, float>::value) {
      return __half2float(h);
    } else {
      return __half2half2(h);
    }
  };
  if (!ok) {
#pragma unroll
    for (int i = 0; i < 4; ++i) s[i] = as(__float2half_rn(0.0f));
  } else if (one_scale) {
    const T s0 = as(srow[c / group_size]);
#pragma unroll
    for (int i = 0; i < 4; ++i) s[i] = s0;
  } else {
#pragma unroll
    for (int i = 0; i < 4; ++i) s[i] = as(srow[(c + 8 * i) / group_size]);
  }
}

/** y row of entry e. */
__device__ __forceinline__ int out_row(const rt_cuda_w4a16_args & a, int e) { return a.rows_out != nullptr ? a.rows_out[e] : e; }
/** x row of entry e. */
__device__ __forceinline__ int in_row(const rt_cuda_w4a16_args & a, int e) { return a.rows_in != nullptr ? a.rows_in[e] : e; }

}  // namespace rt_cuda
