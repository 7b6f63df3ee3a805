#pragma once
// Causal attention over the CPU backend's FP16 KV cache for a run of heads of one token: scores q . k_j * scale,
// softmax in FP32, out = sum_j p_j v_j. On AVX-512 and AVX2 (head_dim 64, 128 or 256) the loops run over positions
// outside and heads inside, so each KV row is read front to back once for all the heads (a head-by-head walk jumps a
// row stride, a page, per position); the softmax's exp is vectorised. Elsewhere the head-by-head loop of the dot /
// exp / axpy kernels. All are tested against ref::attention_head.
#include <cstdint>

namespace rt {

/** Where the heads and their KV rows are. Heads h0 .. h0 + n_heads - 1; head h reads KV head h / rep. */
struct attention_heads {
  const float * q;          // n_heads * head_dim, head after head
  const uint16_t * keys;    // position 0's row of the cache (FP16 bits); position j at keys + j * ld
  const uint16_t * values;  // the same for values
  int64_t ld;
  int h0, n_heads, rep, head_dim;
  float scale;
};

/** Positions 0 .. n-1 (n >= 1); scratch holds n_heads * n floats; out gets n_heads * head_dim. A NaN in q or the
 * keys makes its head's output NaN. */
void cpu_attention_heads_f16(const attention_heads & a, int n, float * scratch, float * out);

}  // namespace rt
