#pragma once
// Groups routed assignments by expert on the device (counting sort), so a whole MoE layer runs without the host.
// Assignment a = t * k + j is token t's j-th expert.
#include <cuda_runtime.h>

constexpr int RT_MOE_GROUP_THREADS = 1024;
// Steps of at most this many tokens may route and group in one launch (one block, 32 warps routing the tokens):
// decode steps, where a launch costs more than the work.
constexpr int RT_ROUTE_AND_GROUP_MAX_TOKENS = 64;

/**
 * ids [n_assign] -> offsets [n_experts + 1], sorted [n_assign] (assignment indices grouped by expert) and
 * sorted_token [n_assign] (sorted[i] / k), and active [n_experts]: the routed experts in ascending order, then -1.
 * Order inside a group is unspecified; results do not depend on it.
 */
void rt_cuda_moe_group(const int * ids, int n_assign, int k, int n_experts, int * offsets, int * sorted,
                       int * sorted_token, int * active, cudaStream_t stream);

/** Whether rt_cuda_route_and_group takes a step of this shape (its token limit and 48 KiB of shared memory). */
bool rt_cuda_route_and_group_fits(int n_tokens, int n_experts, int k);

/**
 * rt_cuda_router_topk then rt_cuda_moe_group in one launch: the same ids and weights bit for bit, the same
 * grouping. Only for shapes rt_cuda_route_and_group_fits accepts.
 */
void rt_cuda_route_and_group(const float * logits, int n_tokens, int n_experts, int k, bool norm_topk_prob, int * ids,
                             float * weights, int * offsets, int * sorted, int * sorted_token, int * active,
                             cudaStream_t stream);
