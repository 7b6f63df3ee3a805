#pragma once
// Dense FP16-weight matmul for the non-routed weights (attention, router, lm_head): y[out_row] (=|+=) W · x[in_row]
// with W [rows, cols] FP16 row-major, FP16 activations and FP32 accumulation.
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include "cuda/matmul-tail.cuh"

/** Which kernel computes a call; `automatic` picks by shape and device (the others are for tests and benchmarks). */
enum class rt_f16_kernel {
  automatic,
  mma,         // tensor cores (sm_80+): 4+ tokens
  gemv,        // CUDA cores, weights and activations straight from global memory, whole rows a warp: decode
  gemv_split,  // the same with a block's warps splitting each row's columns: decode over few rows
  cuda_cores,  // CUDA cores, activations staged in shared memory (the first kernel, kept to be measured against)
  generic,     // one thread per (row, token): any shape
};

/** Tokens from which `automatic` takes the tensor cores (a tile holds 16). */
constexpr int RT_F16_MMA_MIN_TOKENS = 4;

/** Decode GEMV blocks per SM below which (whole rows a warp) the warps of a block split the rows' columns instead. */
constexpr int RT_F16_GEMV_BLOCKS_PER_SM = 2;

/** Output rows per warp, warps per block and activation rows held in registers at once (CUDA-core kernel). */
constexpr int RT_F16_ROWS_PER_WARP = 4;
constexpr int RT_F16_WARPS = 4;
constexpr int RT_F16_TOKEN_TILE = 8;

/** Arguments of rt_cuda_matmul_f16; every pointer is device memory. */
struct rt_cuda_f16_args {
  const __half * x = nullptr;  // row r at x + r * ldx
  int ldx = 0;
  float * y = nullptr;  // row r at y + r * ldy
  int ldy = 0;
  const int * rows_in = nullptr;   // [n] x row per entry; nullptr = the entry index
  const int * rows_out = nullptr;  // [n] y row per entry; nullptr = the entry index
  int n = 0;                       // entries (tokens)
  const __half * w = nullptr;      // [rows, cols]
  int rows = 0;
  int cols = 0;
  bool accumulate = false;
  rt_f16_kernel kernel = rt_f16_kernel::automatic;
  int mma_min_tokens = 0;  // `automatic`'s tensor-core threshold; 0 = RT_F16_MMA_MIN_TOKENS (the benchmark tunes it)
  int gemv_blocks_per_sm = 0;  // the decode GEMVs' aim; 0 = RT_F16_GEMV_BLOCKS_PER_SM (the benchmark tunes it)
  rt_cuda_matmul_tail tail;  // run after the rows are written (y rows 0..tail.n_tokens, rows_out unset)
};

/** The arguments of y[n][rows] = x[n][cols] W^T, W [rows, cols]; x and y rows ldx and ldy apart; the rest default. */
inline rt_cuda_f16_args rt_cuda_f16_dense(const __half * w, int rows, int cols, const __half * x, int ldx, int n,
                                          float * y, int ldy) {
  rt_cuda_f16_args a;
  a.w = w;
  a.rows = rows;
  a.cols = cols;
  a.x = x;
  a.ldx = ldx;
  a.n = n;
  a.y = y;
  a.ldy = ldy;
  return a;
}

void rt_cuda_matmul_f16(const rt_cuda_f16_args & args, cudaStream_t stream);

/** The kernel `automatic` would run for `args` on the current device. */
rt_f16_kernel rt_cuda_f16_choice(const rt_cuda_f16_args & args);

// The kernels behind rt_cuda_matmul_f16 (matmul-f16-mma.cu, matmul-f16-gemv.cu).
bool rt_cuda_f16_mma_fits(const rt_cuda_f16_args & args);
void rt_cuda_f16_mma(const rt_cuda_f16_args & args, cudaStream_t stream);
bool rt_cuda_f16_gemv_fits(const rt_cuda_f16_args & args);
void rt_cuda_f16_gemv(const rt_cuda_f16_args & args, cudaStream_t stream);
void rt_cuda_f16_gemv_split(const rt_cuda_f16_args & args, cudaStream_t stream);
/** Whether `automatic` takes gemv_split over gemv for a matrix of `rows` on the current device, aiming at
 * `blocks_per_sm` blocks an SM (0: RT_F16_GEMV_BLOCKS_PER_SM). */
bool rt_cuda_f16_gemv_splits_columns(int rows, int blocks_per_sm = 0);
