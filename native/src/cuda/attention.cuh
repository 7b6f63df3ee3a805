#pragma once
// Causal attention over a per-sequence FP16 KV cache, for prefill (many tokens) and decode (one token per sequence).
// The step's K/V rows are stored first, then each (token, head) attends to positions 0..pos of its sequence.
#include <cuda_fp16.h>
#include <cuda_runtime.h>

constexpr int RT_ATTENTION_THREADS = 128;
/** Largest head_dim the kernel supports (registers hold head_dim / 32 values per lane). */
constexpr int RT_ATTENTION_MAX_HEAD_DIM = 256;
/** Decode steps of at most this many tokens split each sequence's positions over several blocks (flash-decoding). */
constexpr int RT_ATTENTION_SPLIT_MAX_TOKENS = 8;
/**
 * Split decode steps aim at this many blocks an SM: each token's positions spread over
 * ceil(RT_ATTENTION_BLOCKS_PER_SM * SMs / (tokens * heads)) blocks of a multiple of RT_ATTENTION_MIN_SPLIT_LEN
 * positions, chosen on the device from the token's position (a decode graph replays at every context length).
 */
constexpr int RT_ATTENTION_BLOCKS_PER_SM = 2;
constexpr int RT_ATTENTION_MIN_SPLIT_LEN = 32;

/** Arguments of rt_cuda_attention; every pointer is device memory. */
struct rt_cuda_attention_args {
  const float * q = nullptr;  // token t's heads at q + t * ld (already normed and rotated)
  const float * k = nullptr;  // token t's kv heads at k + t * ld
  const float * v = nullptr;
  int ld = 0;
  __half * const * k_seq = nullptr;  // [slots] per-sequence K cache; position p of this layer at + layer_offset + p * kv_dim
  __half * const * v_seq = nullptr;
  size_t layer_offset = 0;           // elements from a sequence's cache start to this layer's rows
  const int * tok_slot = nullptr;    // [n_tokens] index into k_seq / v_seq of each token's sequence
  const int * tok_pos = nullptr;   // [n_tokens] position of each token
  int n_tokens = 0;
  int n_heads = 0;
  int n_kv_heads = 0;
  int head_dim = 0;
  int max_context = 0;  // bound on pos + 1 (sizes the score buffer)
  __half * out = nullptr;  // [n_tokens, n_heads * head_dim]
  float * workspace = nullptr;  // rt_cuda_attention_workspace_floats floats; nullptr = never split
  int split_len = 0;            // positions per split block; 0 = by position and SM count (RT_ATTENTION_BLOCKS_PER_SM)
  int blocks_per_sm = 0;        // with split_len 0: the blocks an SM the split aims at; 0 = RT_ATTENTION_BLOCKS_PER_SM
  bool kv_stored = false;       // the step's K/V rows are already in the cache (rt_cuda_qk_norm_rope stored them)
  // [RT_ATTENTION_SPLIT_MAX_TOKENS * n_heads] zeroed counters: split blocks merge their partials in the same launch
  // (the last block of a head to finish); nullptr = a second launch merges them.
  unsigned * arrivals = nullptr;
};

/** Floats of workspace that let steps of up to RT_ATTENTION_SPLIT_MAX_TOKENS tokens split their positions (on the
 * current device, whose SM count sets the splits when split_len is 0, with the args' blocks_per_sm). */
size_t rt_cuda_attention_workspace_floats(int n_heads, int head_dim, int max_context, int split_len,
                                          int blocks_per_sm = 0);

/** Bytes of dynamic shared memory one attention block needs for `max_context` and `head_dim`. */
size_t rt_cuda_attention_smem(int max_context, int head_dim);

void rt_cuda_attention(const rt_cuda_attention_args & args, cudaStream_t stream);

/** Blocks a (token, head) gets in the grid of rt_cuda_attention(args) on the current device (1: no split). */
int rt_cuda_attention_splits(const rt_cuda_attention_args & args);
