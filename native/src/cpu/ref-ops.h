#pragma once
// Scalar CPU references for the CUDA ops (the oracle of native/tests/test-gpu-ops.cpp), and the ops the CPU backend
// runs itself (rmsnorm, rope, router top-k, swiglu): one definition each. Plain loops in FP32; no SIMD, no threads.
#include <cstdint>
#include <vector>

namespace rt::ref {

/** binary16 bits -> float (exact). */
float half_to_float(uint16_t h);
/** float -> binary16 bits, round to nearest even. */
uint16_t float_to_half(float f);

/** y[t][r] = sum_g scale[r][g] * sum_{c in g} K[u[r][c]] * x[t][c] (qpacked-v2 row layout, K its codebook). */
void matmul_w4a16(const float * x, int n_tokens, const uint8_t * qweight, const uint16_t * scales, int rows, int cols,
                  int group_size, float * y);
/** y[t][r] = sum_c w[r][c] * x[t][c], w FP16 bits. */
void matmul_f16(const float * x, int n_tokens, const uint16_t * w, int rows, int cols, float * y);
/** y = x * rsqrt(mean(x^2) + eps) * w for one row of n. */
void rmsnorm(const float * x, const float * w, float eps, int n, float * y);
/** Rotate-half RoPE in place on n_heads heads of head_dim at position pos. */
void rope(float * x, int n_heads, int head_dim, int pos, float theta);
/** One head of causal attention: q [hd], keys/values [n][hd] (row stride ld) -> out [hd]; scale 1/sqrt(hd). */
void attention_head(const float * q, const float * keys, const float * values, int n, int ld, int head_dim, float * out);
/** Softmax over n_experts then top-k (ties to the lower index); weights renormalised when norm. */
void router_topk(const float * logits, int n_experts, int k, bool norm, int * ids, float * weights);
/** out[i] = silu(gate[i]) * up[i]. */
void swiglu(const float * gate, const float * up, int n, float * out);
/** Index of the largest value, ties to the lowest index; -1 when a value is NaN (greedy decoding must not go on). */
int argmax(const float * x, int n);

}  // namespace rt::ref
