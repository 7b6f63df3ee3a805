#pragma once
// Groups routed assignments by expert on the device (counting sort), so a whole MoE layer runs without the host.
// Assignment a = t * k + j is token t's j-th expert.
#include <cuda_runtime.h>

constexpr int RT_MOE_GROUP_THREADS = 1024;

/**
 * ids [n_assign] -> offsets [n_experts + 1], sorted [n_assign] (assignment indices grouped by expert) and
 * sorted_token [n_assign] (sorted[i] / k), and active [n_experts]: the routed experts in ascending order, then -1.
 * Order inside a group is unspecified; results do not depend on it.
 */
void rt_cuda_moe_group(const int * ids, int n_assign, int k, int n_experts, int * offsets, int * sorted,
                       int * sorted_token, int * active, cudaStream_t stream);
