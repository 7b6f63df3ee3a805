#pragma once
// Grouped W4A16 matmul over qpacked-v2 experts: y[out_row] (=|+=) W_g · x[in_row] for every entry of every group g,
// where W_g is a 4-bit code matrix (two columns per byte, low nibble first; weight = codebook level x scale) with one FP16 scale per (row, group_size
// columns). One token per entry is the decode GEMV; many entries per group is the prefill / multi-sequence GEMM.
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>

/** Output rows handled by one warp and warps per block of the fast kernel. */
constexpr int RT_W4A16_ROWS_PER_WARP = 4;
constexpr int RT_W4A16_WARPS = 4;
/** Most activation rows held in registers at once (the token tile). */
constexpr int RT_W4A16_TOKEN_TILE = 8;

/** Arguments of rt_cuda_matmul_w4a16; every pointer is device memory. */
struct rt_cuda_w4a16_args {
  const __half * x = nullptr;  // activations; entry row r starts at x + r * ldx
  int ldx = 0;
  // Fused SwiGLU input instead of x: row r is [gate(cols) | up(cols)] FP32 at x_swiglu + r * 2 * cols, and the
  // activation is fp16(silu(gate) * up), exactly what rt_cuda_swiglu would have stored.
  const float * x_swiglu = nullptr;
  float * y = nullptr;  // outputs; row r starts at y + r * ldy
  int ldy = 0;
  const int * rows_in = nullptr;   // [entries] x row per sorted entry; nullptr = the entry index
  const int * rows_out = nullptr;  // [entries] y row per sorted entry; nullptr = the entry index
  const int * offsets = nullptr;   // [n_groups + 1] entry ranges per group; nullptr = one group of n_entries
  int n_entries = 0;
  int max_group_entries = 0;  // upper bound on entries in one group (e.g. the token count); 0 = unknown
  const uint8_t * const * qweight = nullptr;  // [n_groups] per-group [rows, cols/2] bytes; nullptr skips a group
  const __half * const * scales = nullptr;    // [n_groups] per-group [rows, cols/group_size]
  int n_groups = 1;
  const int * active = nullptr;  // [n_launch] group per grid row, -1 = none (moe-group's list); nullptr = all groups
  int n_launch = 0;              // grid rows when `active` is set (an upper bound on non-empty groups)
  int rows = 0;
  int cols = 0;
  int group_size = 0;
  bool accumulate = false;
};

void rt_cuda_matmul_w4a16(const rt_cuda_w4a16_args & args, cudaStream_t stream);
