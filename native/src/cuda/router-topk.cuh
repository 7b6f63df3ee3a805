#pragma once
// MoE router: softmax over all experts in FP32, then the top-k probabilities (ties to the lower expert index),
// renormalised only when norm_topk_prob.
#include <cuda_runtime.h>

constexpr int RT_ROUTER_WARPS = 4;
constexpr int RT_ROUTER_MAX_EXPERTS = 1024;

/** logits [n_tokens, n_experts] -> ids and weights [n_tokens, k], each row in descending probability order. */
void rt_cuda_router_topk(const float * logits, int n_tokens, int n_experts, int k, bool norm_topk_prob, int * ids,
                         float * weights, cudaStream_t stream);
