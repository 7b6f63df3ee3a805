#pragma once
// Fused OLMoE attention prologue for one step: RMSNorm over the whole q and k projections, rotate-half RoPE on both,
// q written back in place (FP32) and k, v stored in each token's sequence KV cache (FP16). Equivalent to
// rt_cuda_rmsnorm (q, k) + rt_cuda_rope (q, k) + the attention's own K/V store, in one launch.
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstddef>

constexpr int RT_QK_NORM_ROPE_THREADS = 1024;

/** Arguments of rt_cuda_qk_norm_rope; every pointer is device memory. */
struct rt_cuda_qk_norm_rope_args {
  float * qkv = nullptr;  // token t: [q (n_heads*head_dim) | k (n_kv_heads*head_dim) | v] at qkv + t * ld
  int ld = 0;
  int n_tokens = 0;
  int n_heads = 0;
  int n_kv_heads = 0;
  int head_dim = 0;
  const __half * q_norm = nullptr;  // [n_heads * head_dim]
  const __half * k_norm = nullptr;  // [n_kv_heads * head_dim]
  float eps = 1e-5f;
  float theta = 10000.0f;
  const int * positions = nullptr;   // [n_tokens]
  const int * tok_slot = nullptr;    // [n_tokens] index into k_seq / v_seq
  __half * const * k_seq = nullptr;  // per-sequence caches, as in rt_cuda_attention_args
  __half * const * v_seq = nullptr;
  size_t layer_offset = 0;
};

void rt_cuda_qk_norm_rope(const rt_cuda_qk_norm_rope_args & args, cudaStream_t stream);
