#pragma once
// Weighted sum of each token's expert outputs into the residual stream, in routing order (deterministic).
#include <cuda_runtime.h>

/** x[t] += sum_j weights[t * k + j] * z[(t * k + j)], rows of `hidden` FP32 values. */
void rt_cuda_moe_reduce(const float * z, const float * weights, int n_tokens, int k, int hidden, float * x,
                        cudaStream_t stream);
