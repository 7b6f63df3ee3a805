#pragma once
// RMSNorm in FP32: y[t] = x[t] * rsqrt(mean(x[t]^2) + eps) * w. Also used for OLMoE's q/k norms over the whole
// projection width (in place on the FP32 projection rows).
#include <cuda_fp16.h>
#include <cuda_runtime.h>

constexpr int RT_RMSNORM_THREADS = 1024;

/** Normalises n_rows rows of n columns; writes y_f16 (FP16) or y_f32 (FP32, may alias x); row strides ldx, ldy. */
void rt_cuda_rmsnorm(const float * x, int ldx, const __half * w, float eps, int n_rows, int n, __half * y_f16,
                     float * y_f32, int ldy, cudaStream_t stream);
