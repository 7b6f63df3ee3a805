#pragma once
// Fused SwiGLU: out[r][i] = silu(gu[r][i]) * gu[r][inter + i], FP32 in, FP16 out.
#include <cuda_fp16.h>
#include <cuda_runtime.h>

/** gu rows are [gate(inter) | up(inter)] FP32; out rows are inter FP16. */
void rt_cuda_swiglu(const float * gu, int n_rows, int inter, __half * out, cudaStream_t stream);
