#pragma once
// Grouped W4A16 matmul over qpacked-v2 experts: y[out_row] (=|+=) W_g · x[in_row] for every entry of every group g,
// where W_g is a 4-bit code matrix (two columns per byte, low nibble first; weight = codebook level x scale) with one FP16 scale per (row, group_size
// columns). One token per entry is the decode GEMV; many entries per group is the prefill / multi-sequence GEMM.
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "cuda/matmul-tail.cuh"

/** Which kernel computes a call; `automatic` picks by shape and device (the others are for tests and benchmarks). */
enum class rt_w4a16_kernel {
  automatic,
  gemv,        // CUDA cores, weights and activations straight from global memory: decode (a few entries a group)
  mma,         // tensor cores (sm_80+), m16n8k16 FP16 with FP32 accumulation: prefill and batched decode
  smem_tiled,  // CUDA cores, activations staged in shared memory (the first kernel, kept to be measured against)
  generic,     // one thread per (row, entry): any even shape
};

/** Entries a group must average for `automatic` to take the tensor cores (a tile holds 16; below, GEMV). */
constexpr int RT_W4A16_MMA_MIN_ENTRIES = 4;

/** Output rows handled by one warp and warps per block of the smem-tiled kernel. */
constexpr int RT_W4A16_ROWS_PER_WARP = 4;
constexpr int RT_W4A16_WARPS = 4;
/** Most activation rows held in registers at once (the token tile). */
constexpr int RT_W4A16_TOKEN_TILE = 8;

/** Arguments of rt_cuda_matmul_w4a16; every pointer is device memory. */
struct rt_cuda_w4a16_args {
  const __half * x = nullptr;  // activations; entry row r starts at x + r * ldx
  int ldx = 0;
  float * y = nullptr;  // outputs; row r starts at y + r * ldy
  int ldy = 0;
  const int * rows_in = nullptr;   // [entries] x row per sorted entry; nullptr = the entry index
  const int * rows_out = nullptr;  // [entries] y row per sorted entry; nullptr = the entry index
  const int * offsets = nullptr;   // [n_groups + 1] entry ranges per group; nullptr = one group of n_entries
  int n_entries = 0;
  int max_group_entries = 0;  // upper bound on entries in one group (e.g. the token count); 0 = unknown
  // Entries a group averages, for the kernel choice; 0 = n_entries over the groups launched. The MoE passes the
  // step's figure so that a stage of a few experts (partial residency) computes as all experts would.
  int mean_group_entries = 0;
  const uint8_t * const * qweight = nullptr;  // [n_groups] per-group [rows, cols/2] bytes; nullptr skips a group
  const __half * const * scales = nullptr;    // [n_groups] per-group [rows, cols/group_size]
  int n_groups = 1;
  const int * active = nullptr;  // [n_launch] group per grid row, -1 = none (moe-group's list); nullptr = all groups
  int n_launch = 0;              // grid rows when `active` is set (an upper bound on non-empty groups)
  int rows = 0;
  int cols = 0;
  int group_size = 0;
  bool accumulate = false;
  // SwiGLU epilogue (gate-up projections): rows [0, rows/2) are gate rows and [rows/2, rows) up rows; entry e's
  // fp16(silu(gate_r) * up_r), as rt_cuda_swiglu computes it, goes to y_swiglu + rows_out[e] * ld_swiglu + r.
  // A kernel without the epilogue writes y (then scratch, with ldy == rows) and rt_cuda_swiglu converts its first
  // swiglu_rows rows (ld_swiglu == rows / 2). Not with accumulate.
  __half * y_swiglu = nullptr;
  int ld_swiglu = 0;
  int swiglu_rows = 0;
  rt_w4a16_kernel kernel = rt_w4a16_kernel::automatic;
  int mma_min_entries = 0;  // `automatic`'s tensor-core threshold; 0 = RT_W4A16_MMA_MIN_ENTRIES (the benchmark tunes it)
  // Run after the rows are written, over y (moe_reduce: rows_out are the assignments t * k + j). Not with SwiGLU.
  rt_cuda_matmul_tail tail;
};

/** The kernel `automatic` would run for `args` on the current device. */
rt_w4a16_kernel rt_cuda_w4a16_choice(const rt_cuda_w4a16_args & args);

/** Grid rows of a launch: one per listed group (`active`) or per group. */
inline int rt_cuda_w4a16_grid_rows(const rt_cuda_w4a16_args & a) { return a.active != nullptr ? a.n_launch : a.n_groups; }

/** Entries a group averages (rounded down): `mean_group_entries`, else n_entries over the groups launched. */
inline int rt_cuda_w4a16_mean_entries(const rt_cuda_w4a16_args & a) {
  if (a.mean_group_entries > 0) return a.mean_group_entries;
  if (a.offsets == nullptr) return a.n_entries;
  const int groups = a.n_entries < rt_cuda_w4a16_grid_rows(a) ? a.n_entries : rt_cuda_w4a16_grid_rows(a);
  return groups > 0 ? a.n_entries / groups : a.n_entries;
}

void rt_cuda_matmul_w4a16(const rt_cuda_w4a16_args & args, cudaStream_t stream);

// The kernels behind rt_cuda_matmul_w4a16 (one file each); `fits` says whether a kernel can take the shape.
bool rt_cuda_w4a16_gemv_fits(const rt_cuda_w4a16_args & args);
void rt_cuda_w4a16_gemv(const rt_cuda_w4a16_args & args, cudaStream_t stream);
bool rt_cuda_w4a16_mma_fits(const rt_cuda_w4a16_args & args);
void rt_cuda_w4a16_mma(const rt_cuda_w4a16_args & args, cudaStream_t stream);
