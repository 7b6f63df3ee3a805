#pragma once
// Rotate-half rotary position embedding (GPT-NeoX / Llama style), in place on FP32 head vectors.
#include <cuda_runtime.h>

/** Rotates n_heads heads of head_dim per token; token t's row starts at x + t * ld, its position is positions[t]. */
void rt_cuda_rope(float * x, int ld, int n_tokens, int n_heads, int head_dim, const int * positions, float theta,
                  cudaStream_t stream);
