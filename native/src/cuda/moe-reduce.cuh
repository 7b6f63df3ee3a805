#pragma once
// Weighted sum of each token's expert outputs into the residual stream, in routing order (deterministic), and,
// fused into the same launch, the RMSNorm that the next layer (or the final norm) applies to the updated rows.
#include <cuda_fp16.h>
#include <cuda_runtime.h>

/**
 * x[t] += sum_j weights[t * k + j] * z[(t * k + j)], rows of `hidden` FP32 values. When norm_w is set, also
 * y[t] = FP16(x[t] * rsqrt(mean(x[t]^2) + eps) * norm_w), bit for bit what rt_cuda_rmsnorm gives for the new x.
 */
void rt_cuda_moe_reduce(const float * z, const float * weights, int n_tokens, int k, int hidden, float * x,
                        const __half * norm_w, float eps, __half * y, cudaStream_t stream);
