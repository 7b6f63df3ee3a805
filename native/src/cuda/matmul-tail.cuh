#pragma once
// The step's small kernel that follows a matmul over its output (a norm, the routing, the attention prologue, the
// MoE reduce), given to the matmul as its tail. A decode GEMV runs it in its last block to finish (one launch where
// there were two: at batch 1 a launch costs about what the tail's work does); any other kernel choice, or a step of
// more than RT_MATMUL_TAIL_MAX_TOKENS tokens, runs the tail's own kernel after the matmul. The results are the same
// bits either way.
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include "cuda/qk-norm-rope.cuh"

enum class rt_matmul_tail_kind {
  none,
  rmsnorm,       // out16[t] = rmsnorm(y[t]) with norm_w (the post-attention norm after the output projection)
  route,         // top-k of softmax(y[t]) into ids / weights, grouped by expert when offsets is set (the router)
  qk_norm_rope,  // rt_cuda_qk_norm_rope over y (the QKV projection)
  moe_reduce,    // rt_cuda_moe_reduce of y (the down projection's rows t * k + j) into x, then the next norm
  argmax,        // rt_cuda_argmax of y's rows into argmax_out (the greedy pick after the LM head)
};

/** A tail does its tokens one after another in one block: past this many a launch of their own is cheaper. */
constexpr int RT_MATMUL_TAIL_MAX_TOKENS = 2;

/** What a matmul runs after its rows are written; pointers are device memory. */
struct rt_cuda_matmul_tail {
  rt_matmul_tail_kind kind = rt_matmul_tail_kind::none;
  int n_tokens = 0;
  unsigned * arrivals = nullptr;  // a zeroed counter, for the in-launch form; nullptr = always a launch of its own
  // rmsnorm and moe_reduce (norm_w nullptr: no norm after the reduce)
  const __half * norm_w = nullptr;
  float eps = 1e-5f;
  __half * out16 = nullptr;  // [n_tokens] rows of the matmul's row count
  // route and moe_reduce
  int k = 0;                  // experts per token
  bool norm_topk_prob = false;
  int * ids = nullptr;        // [n_tokens * k]
  float * weights = nullptr;  // [n_tokens * k] written by route, read by moe_reduce
  int * offsets = nullptr;    // grouping (rt_cuda_moe_group's outputs); nullptr = route only
  int * sorted = nullptr;
  int * sorted_token = nullptr;
  int * active = nullptr;
  float * x = nullptr;        // moe_reduce: the residual rows
  rt_cuda_qk_norm_rope_args qk;  // qk_norm_rope (its qkv and ld are the matmul's y and ldy)
  int * argmax_out = nullptr;    // argmax: [n_tokens]
  // argmax in the launch: [n_tokens][argmax_partials_per_token] each block's best of its rows, for the last block;
  // at least as many a token as the matmul has rows (a block has one or more). nullptr: a launch of its own.
  int2 * argmax_partials = nullptr;
  int argmax_partials_per_token = 0;
};

/** Whether a GEMV launch of `rows` x (y with row stride ldy) may run `tail` in its last block. */
bool rt_cuda_matmul_tail_in_launch(const rt_cuda_matmul_tail & tail, int rows, int ldy);

/** Dynamic shared memory the in-launch tail needs in a block of `warps` warps. */
size_t rt_cuda_matmul_tail_smem(const rt_cuda_matmul_tail & tail, int rows, int warps);

/** The tail as launches of its own, over the matmul's output y ([n_tokens or n_tokens * k] rows of `rows`, ldy). */
void rt_cuda_matmul_tail_launch(const rt_cuda_matmul_tail & tail, float * y, int rows, int ldy, cudaStream_t stream);
