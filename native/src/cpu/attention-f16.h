#pragma once
// Causal attention over the CPU backend's FP16 KV cache for a run of heads of one token: scores q . k_j * scale,
// softmax in FP32, out = sum_j p_j v_j. On AVX-512 and AVX2 (head_dim 64, 128 or 256) the loops run over positions
// outside and heads inside, so each KV row is read front to back once for all the heads (a head-by-head walk jumps a
// row stride, a page, per position); the softmax's exp is vectorised. Elsewhere the head-by-head loop of the dot /
// exp / axpy kernels. All are tested against ref::attention_head.
//
// A token's positions are cut into chunks (attention_chunks), each giving a partial result that is merged into the
// chunks before it in order, as flash-decoding does. The cut depends on the position count alone, so the chunks may
// run on different threads (a decode step of one sequence: each thread reads whole contiguous rows, which its
// prefetchers follow, instead of half of every row) or one after another (cpu_attention_heads_f16), with the same
// result bit for bit.
#include <cstdint>
#include <vector>

#include "core/thread-pool.h"

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

/** The most positions a chunk has. */
constexpr int RT_CPU_ATTENTION_CHUNK = 128;

/** Chunks of n positions (n >= 1): as few as keep each at most RT_CPU_ATTENTION_CHUNK, of nearly equal length. */
inline int attention_chunks(int n) { return (n + RT_CPU_ATTENTION_CHUNK - 1) / RT_CPU_ATTENTION_CHUNK; }

/** Chunk k's first position (k = attention_chunks(n) gives n). */
inline int attention_chunk_begin(int n, int k) {
  return static_cast<int>(static_cast<int64_t>(k) * n / attention_chunks(n));
}

/**
 * One chunk's result for each of n_heads heads, not yet divided by its softmax's sum: max the largest score,
 * sum = sum_j exp(score_j - max), out = sum_j exp(score_j - max) v_j (n_heads * head_dim).
 */
struct attention_partial {
  float * out;
  float * max;
  float * sum;
};

/** Positions j0 .. j1 - 1 (1 <= j1 - j0 <= RT_CPU_ATTENTION_CHUNK); scratch holds n_heads * (j1 - j0) floats. */
void cpu_attention_chunk_f16(const attention_heads & a, int j0, int j1, float * scratch, const attention_partial & p);

/** `next` (the chunk after those in `into`) merged into `into`. */
void attention_partial_merge(const attention_partial & into, const attention_partial & next, int n_heads, int head_dim);

/** out = p.out / p.sum, head by head (out may be p.out). */
void attention_partial_finish(const attention_partial & p, int n_heads, int head_dim, float * out);

/** Floats of scratch cpu_attention_heads_f16 takes for n_heads heads of head_dim. */
inline int64_t cpu_attention_scratch_floats(int n_heads, int head_dim) {
  return static_cast<int64_t>(n_heads) * (RT_CPU_ATTENTION_CHUNK + head_dim + 4);
}

/** Positions 0 .. n-1 (n >= 1), chunk after chunk; out gets n_heads * head_dim. A NaN in q or the keys makes its
 * head's output NaN. */
void cpu_attention_heads_f16(const attention_heads & a, int n, float * scratch, float * out);

/** One token of a step: all its heads (h0 = 0) against its sequence's first n positions; out gets n_heads * head_dim. */
struct attention_token {
  attention_heads heads;
  int n;
  float * out;
};

/** What cpu_attention_step keeps from call to call. */
struct attention_step_scratch {
  std::vector<int> slot_token, slot_chunk;  // slot s: chunk slot_chunk[s] of token slot_token[s]
  std::vector<float> partials;              // and its partial result
};

/**
 * A step's attention on the pool. Tokens enough for two a thread: a token an item, its chunks in order. Fewer
 * (decode): items are (token, chunk, run of heads), a run all heads where the chunks alone give each thread two
 * items, so a thread reads whole rows of contiguous positions; the partials are merged in order after. Either way
 * each token's output is cpu_attention_heads_f16's, bit for bit.
 */
void cpu_attention_step(const std::vector<attention_token> & tokens, thread_pool & pool, attention_step_scratch & scratch);

}  // namespace rt
