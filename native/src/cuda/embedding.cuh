#pragma once
// Embedding gather: x[t] = float(table[ids[t]]), and in the same launch the first layer's input norm of it.
#include <cuda_fp16.h>
#include <cuda_runtime.h>

/**
 * Gathers n rows of `hidden` FP16 values into FP32 x (ids outside [0, vocab) give a zero row); then, when norm_w is
 * set, xn[t] = FP16 rmsnorm(x[t]) with norm_w, bit for bit rt_cuda_rmsnorm's result.
 */
void rt_cuda_embedding(const int * ids, int n, const __half * table, int vocab, int hidden, float * x,
                       const __half * norm_w, float eps, __half * xn, cudaStream_t stream);
