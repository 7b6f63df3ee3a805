#pragma once
// Embedding gather: x[t] = float(table[ids[t]]).
#include <cuda_fp16.h>
#include <cuda_runtime.h>

/** Gathers n rows of `hidden` FP16 values into FP32 x; ids outside [0, vocab) give a zero row. */
void rt_cuda_embedding(const int * ids, int n, const __half * table, int vocab, int hidden, float * x,
                       cudaStream_t stream);
