#include "cuda/moe-reduce.cuh"

#include "cuda/common.cuh"

namespace {

__global__ void moe_reduce_kernel(const float * z, const float * weights, int k, int hidden, float * x) {
  const int t = blockIdx.x;
  for (int c = threadIdx.x; c < hidden; c += blockDim.x) {
    float s = 0.0f;
    for (int j = 0; j < k; ++j) s = fmaf(weights[t * k + j], z[(static_cast<size_t>(t) * k + j) * hidden + c], s);
    x[static_cast<size_t>(t) * hidden + c] += s;
  }
}

}  // namespace

void rt_cuda_moe_reduce(const float * z, const float * weights, int n_tokens, int k, int hidden, float * x,
                        cudaStream_t stream) {
  if (n_tokens <= 0) return;
  moe_reduce_kernel<<<n_tokens, 256, 0, stream>>>(z, weights, k, hidden, x);
  RT_CUDA_LAUNCH_CHECK();
}
