#pragma once
// The non-routed dense matmuls of the CPU backend (attention projections, router, LM head) over weights re-laid as
// panels of 16 rows, column by column: one vector load reads one column of 16 rows, and each broadcast activation
// meets it in one FMA a token, so a step of 16 tokens keeps 16 accumulators busy from one weight load. The dot
// product kernels this replaces for them loaded a row and an activation vector per FMA and ran 72-87 G
// multiply-adds a second on two threads at 16 tokens against this one's 101-108 G (2048 and 6144 rows of 2048).
//
// Every result is the chain order: acc = fma(W[r][k], x[k], acc) for k = 0, 1, ..., cols - 1 from acc = 0, on the
// AVX-512, AVX2 and scalar paths alike, so a row's value does not depend on the batch, the blocking or the CPU.
#include <cstdint>
#include <vector>

#include "core/model-weights.h"
#include "core/thread-pool.h"

namespace rt {

constexpr int kPanelRows = 16;

/**
 * A [rows, cols] BF16/F16/F32 matrix as panels: panel p holds rows 16p .. 16p + 15 column by column
 * ([panels][cols][16], in the source's element type; rows past the end are zero).
 */
struct dense_panels {
  dtype type = dtype::f32;
  int64_t rows = 0, cols = 0;
  std::vector<uint16_t> half;  // F16 / BF16
  std::vector<float> full;     // F32
  int64_t panels() const { return (rows + kPanelRows - 1) / kPanelRows; }
};

/** The path the panels' kernels take now: "avx512", "avx2" or "scalar" (it follows cpu_isa_active()). */
const char * dense_panels_path();

/**
 * Groups of 16 tokens a pass over the rows takes (at least one): their FP32 activations of `cols` values fill at most
 * half a megabyte, which L2 holds while the pass reads the panels, and L2 keeps each panel for the pass's next group.
 */
int dense_panels_pass_groups(int64_t cols);

/** Re-lays `w` ([rows, cols], BF16/F16/F32) as panels. */
void dense_panels_build(const tensor_view & w, thread_pool & pool, dense_panels & p);

/** Rows 16q .. 16q + 15 of panel q as float rows (out[l * cols + k]; rows past the end are zero). */
void dense_panels_rows_f32(const dense_panels & p, int64_t q, float * out);

/**
 * Memory a product reuses from call to call: its owner (the CPU backend) makes one call at a time, as its pool does.
 * Not thread_local: the addon runs each request on a thread of its own, and thread_local objects with destructors
 * in short-lived threads corrupt the heap in MinGW-w64 builds under Wine (test-concurrent-requests read freed token
 * ids in 4 of 430 runs on a loaded CPU; a program of threads that each resize a thread_local vector crashed).
 */
struct dense_panels_scratch {
  std::vector<float> xt;  // the tokens' activations, group by group, column by column
};

/** One product of a step: y[t * ldy + r] = W[r] . x[t] for every row r of w and token t. */
struct dense_job {
  const dense_panels * w = nullptr;
  float * y = nullptr;
  int64_t ldy = 0;
};

/**
 * Every job against the same `tokens` activation rows (x[t * ldx + k], k < the jobs' common cols), all jobs' panels
 * split over the pool in one pass (the q, k and v projections take one call). Results in the chain order. Without
 * `scratch` the call allocates its own.
 */
void dense_panels_matmul(const dense_job * jobs, int count, const float * x, int64_t ldx, int tokens, thread_pool & pool,
                         dense_panels_scratch * scratch = nullptr);

/** One job: y[t * ldy + r] = W[r] . x[t * ldx ..]. */
void dense_panels_matmul(const dense_panels & w, const float * x, int64_t ldx, int tokens, float * y, int64_t ldy,
                         thread_pool & pool, dense_panels_scratch * scratch = nullptr);

/**
 * y[i] = W[rows[i]] . x for n rows of a row-major W ([rows, cols], BF16/F16/F32), in the chain order: the same bits as
 * the panels give for those rows (the LM head screen's exact rows, read without the panels' 16-row stride).
 */
void cpu_rows_dot_chain(const tensor_view & w, const int32_t * rows, int n, const float * x, float * y);

/** The reference for both: row r of a row-major W against x in the chain order, plain scalar code. */
float dense_chain_dot_reference(const tensor_view & w, int64_t r, const float * x);

}  // namespace rt
