#pragma once
// Greedy argmax per row of FP32 logits; ties go to the lowest index; a row holding a NaN gives -1.
#include <cuda_runtime.h>

constexpr int RT_ARGMAX_THREADS = 1024;

/** out[r] = argmax(logits[r * ld .. r * ld + n_cols)), or -1 when that row holds a NaN. */
void rt_cuda_argmax(const float * logits, int n_rows, int n_cols, int ld, int * out, cudaStream_t stream);
