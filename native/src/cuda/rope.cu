#include "cuda/rope.cuh"

#include "cuda/common.cuh"

namespace {

__global__ void rope_kernel(float * x, int ld, int n_heads, int head_dim, const int * positions, float theta) {
  rt_cuda::follow_prior_grids();
  const int t = blockIdx.x;
  const int half_dim = head_dim / 2;
  const float pos = static_cast<float>(positions[t]);
  float * row = x + static_cast<size_t>(t) * ld;
  for (int idx = threadIdx.x; idx < n_heads * half_dim; idx += blockDim.x) {
    const int h = idx / half_dim;
    const int i = idx - h * half_dim;
    // Same float32 steps as transformers: inv_freq = 1 / theta^(2i/d), angle = pos * inv_freq.
    const float inv_freq = 1.0f / powf(theta, static_cast<float>(2 * i) / static_cast<float>(head_dim));
    float s, c;
    sincosf(pos * inv_freq, &s, &c);
    float * head = row + h * head_dim;
    const float x1 = head[i];
    const float x2 = head[i + half_dim];
    head[i] = x1 * c - x2 * s;
    head[i + half_dim] = x2 * c + x1 * s;
  }
}

}  // namespace

void rt_cuda_rope(float * x, int ld, int n_tokens, int n_heads, int head_dim, const int * positions, float theta,
                  cudaStream_t stream) {
  if (n_tokens <= 0) return;
  rt_cuda::launch("rope_kernel", rope_kernel, n_tokens, 256, 0, stream, x, ld, n_heads, head_dim, positions, theta);
  RT_CUDA_LAUNCH_CHECK();
}
