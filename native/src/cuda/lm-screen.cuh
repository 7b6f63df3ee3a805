#pragma once
// Greedy steps' argmax over the LM head through its INT8 copy (the device form of cpu/lm-head-screen.h, which builds
// the copy): a first launch gives every row a bound [lo, hi] on the logit the decode GEMV (matmul-f16-gemv.cu, whole
// rows a warp) would compute, and each token's floor, the largest lo; a second computes only the rows whose hi reaches
// the floor, in the GEMV's own arithmetic, and picks the argmax (ties to the lowest row, -1 on NaN) as the GEMV's
// argmax tail would. The token is exactly that GEMV's argmax while a step reads the INT8 head (half the FP16 bytes)
// and a few FP16 rows. A token whose activations are not finite, or so large that a product could overflow, gets
// hi = +inf on every row, so every row is computed: the full product.
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstddef>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

/** Tokens one call screens (a decode step of up to this many sequences). */
constexpr int RT_LM_SCREEN_MAX_TOKENS = 8;

struct rt_cuda_lm_screen_args {
  const int8_t * q = nullptr;      // [rows][cols] INT8 codes of the head
  const float4 * meta = nullptr;   // per row: {scale, max |w - scale q| rounded up, max |w|, sum |q|}
  float max_abs_all = 0;           // max |w| over the head
  float gamma = 0;                 // bound on the relative float rounding of a cols-term product, rounded up
  const __half * w = nullptr;      // [rows][cols] the FP16 head
  int rows = 0;
  int cols = 0;
  const __half * x = nullptr;      // token t's activations at x + (rows_in ? rows_in[t] : t) * ldx
  int ldx = 0;
  const int * rows_in = nullptr;
  int n = 0;
  float * hi = nullptr;            // [n][rows] workspace: each row's largest possible logit
  unsigned * floor = nullptr;      // [n] the largest smallest logit, ordered bits; zero before a call and after it
  int2 * partials = nullptr;       // [n][partials_per_token] the pick's per-block best
  int partials_per_token = 0;      // at least rt_cuda_lm_screen_pick_blocks(rows)
  unsigned * arrivals = nullptr;   // zero before a call and after it
  unsigned long long * stats = nullptr;  // [2] += tokens screened, FP16 rows computed; may be null
  int * out = nullptr;             // [n] the tokens
};

/** A head's screen as these kernels take it, built on the host by cpu/lm-head-screen.h from the FP16 values the GEMV
 * reads; `ok` is false (no screen) when the head holds Inf or NaN. */
struct rt_lm_screen_copy {
  bool ok = false;
  std::vector<int8_t> q;      // [rows][cols]
  std::vector<float4> meta;   // per row, as rt_cuda_lm_screen_args::meta
  float max_abs_all = 0;
  float gamma = 0;
};
rt_lm_screen_copy rt_lm_screen_build(const uint16_t * f16, int rows, int cols);

/** Arguments with the head's fields set: `copy`'s figures, its codes and row figures uploaded at q and meta, the FP16
 * head w [rows][cols], partials_per_token the pick's blocks; the caller sets the tokens and the workspace. */
rt_cuda_lm_screen_args rt_cuda_lm_screen_head(const rt_lm_screen_copy & copy, const int8_t * q, const float4 * meta,
                                              const __half * w, int rows, int cols);

/** Whether a call of `n` tokens over a head of `cols` columns fits these kernels. */
bool rt_cuda_lm_screen_fits(int cols, int n);
/** Device bytes of a head's screen: its codes and row figures and the bounds of RT_LM_SCREEN_MAX_TOKENS tokens. */
inline size_t rt_cuda_lm_screen_bytes(int rows, int cols) {
  const size_t per_row = static_cast<size_t>(cols) + sizeof(float4) + RT_LM_SCREEN_MAX_TOKENS * sizeof(float);
  return static_cast<size_t>(rows) * per_row + RT_LM_SCREEN_MAX_TOKENS * sizeof(unsigned) + 2 * sizeof(unsigned long long);
}
/** Blocks of the pick launch: the partials each token needs. */
int rt_cuda_lm_screen_pick_blocks(int rows);

/** The bounds (hi, floor) alone: the first launch, for tests. */
void rt_cuda_lm_screen_bounds(const rt_cuda_lm_screen_args & args, cudaStream_t stream);
/** The pick alone: the second launch, after rt_cuda_lm_screen_bounds. */
void rt_cuda_lm_screen_pick(const rt_cuda_lm_screen_args & args, cudaStream_t stream);
/** Both launches: out[t] = the decode GEMV's argmax of the head times token t's activations. */
void rt_cuda_lm_screen(const rt_cuda_lm_screen_args & args, cudaStream_t stream);

/** The float whose ordered bits `floor` holds (-inf for zero, the value before any row). */
inline __host__ __device__ float rt_lm_screen_floor_value(unsigned bits) {
  if (bits == 0) return -INFINITY;
  const unsigned raw = (bits & 0x80000000u) != 0 ? bits ^ 0x80000000u : ~bits;
  float f;
  memcpy(&f, &raw, 4);
  return f;
}
