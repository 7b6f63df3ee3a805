#pragma once
// Greedy decoding's argmax over the LM head without reading all of it: an INT8 copy of the head (one scale a row)
// screens the vocabulary, and only the rows that can still be the largest are computed from the FP16 weights. Each
// screened logit comes with a bound on its distance to the logit the full FP16 product would give (the INT8 rounding
// of the weights and of the activations, and the float rounding of the full product), so a row is left out only when
// its largest possible logit is below the smallest possible logit of another row: the token is exactly the argmax of
// the full product (ties to the lowest id, -1 on NaN). A batch-1 decode step of OLMoE then reads 103 MB of INT8 and a
// few FP16 rows instead of 206 MB of FP16, a sixth of its bytes.
#include <cstdint>
#include <vector>

#include "core/model-weights.h"
#include "core/thread-pool.h"
#include "cpu/dense-panels.h"

namespace rt {

/**
 * Greedy steps of at most this many outputs take the screen; larger ones the full product. OLMoE's head on two
 * threads, full product on the panels against the screen: 1 output 5.5-5.8 / 2.9-3.2 ms, 4: 6.5 / 3.7, 8: 9.7 / 6.5,
 * 16: 16.6 / 11.1-11.9, 32: 31.6 / 20.9, 64: 62.2 / 45.5. Past 64 (batches the CPU's automatic choice never takes) it
 * is not measured; the screen keeps its INT8 dots of every row and token, 4 bytes each.
 */
constexpr int RT_CPU_LM_SCREEN_MAX_TOKENS = 64;

struct lm_head_screen {
  int rows = 0, cols = 0;
  std::vector<int8_t> q;        // [rows][cols]: round(w / scale), in [-127, 127]
  std::vector<float> scale;     // per row: max |w| / 127
  std::vector<float> err;       // per row: max |w - scale * q|, rounded up
  std::vector<float> max_abs;   // per row: max |w|
  std::vector<int32_t> l1;      // per row: sum |q|
  std::vector<int32_t> q_sum;   // per row: sum q (dpbusd's unsigned activations are x + 128)
  float max_abs_all = 0;        // max |w| over the matrix
  float err_max = 0;            // max of err over the rows
  double scale_l1_max = 0;      // max of scale * l1 over the rows
  bool ok = false;              // built, and every weight finite
};

/** Memory the screen reuses from call to call (see dense_panels_scratch): the INT8 dots of every row and token. */
struct lm_head_screen_scratch {
  std::vector<int32_t> dots;
  dense_panels_scratch dense;
};

/** What the screen did: tokens screened, FP16 rows computed for them, tokens it handed to the full product. */
struct lm_head_screen_stats {
  uint64_t tokens = 0, exact_rows = 0, full_products = 0;
};

/** Builds the INT8 copy of `w` ([rows, cols], F16/BF16/F32); leaves s.ok false when a weight is not finite. */
void lm_head_screen_build(const tensor_view & w, thread_pool & pool, lm_head_screen & s);
/** The same copy from the head's panels (the CPU backend's, whose mapped rows are no longer resident). */
void lm_head_screen_build(const dense_panels & p, thread_pool & pool, lm_head_screen & s);

/**
 * next[t] = argmax over rows r of W[r] . x[t * ldx ..] in the chain order of cpu/dense-panels.h for t < n, exactly
 * (ties to the lowest row, -1 when a logit is NaN), reading W's rows (row-major `w`) only for the screen's
 * candidates. A token whose activations are not finite, or large enough that a product could overflow, takes the
 * full product from `panels` (the same matrix as panels) instead. Without `scratch` the call allocates its own.
 */
void lm_head_screen_argmax(const lm_head_screen & s, const tensor_view & w, const dense_panels & panels, const float * x,
                           int64_t ldx, int n, thread_pool & pool, int32_t * next, lm_head_screen_stats & stats,
                           lm_head_screen_scratch * scratch = nullptr);

/** Bound on the relative float rounding of an n-term dot product summed in any order: gamma(n + 2), unit round-off
 * 2^-24 (the CUDA screen's bound takes it too). */
double lm_head_screen_gamma(int n);

/**
 * out[r * ldo + t] = sum of q[r * qs + i] * x[t * ldx + i] over `cols` int8 values, for `rows` rows and n tokens (the
 * screen's kernels: a row against four tokens at a time, or tiles of four rows by four tokens from 12 tokens;
 * |values| <= 127). The scalar loop is the reference.
 */
void lm_head_screen_dots(const int8_t * q, int64_t qs, int rows, const int8_t * x, int64_t ldx, int cols, int n, int32_t * out,
                         int64_t ldo);
int32_t lm_head_screen_dot_reference(const int8_t * q, const int8_t * x, int n);

}  // namespace rt
