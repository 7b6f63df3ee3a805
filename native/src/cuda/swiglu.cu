#include "cuda/swiglu.cuh"

#include "cuda/common.cuh"

namespace {

__global__ void swiglu_kernel(const float * gu, size_t total, int inter, __half * out) {
  rt_cuda::follow_prior_grids();
  for (size_t idx = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; idx < total;
       idx += static_cast<size_t>(gridDim.x) * blockDim.x) {
    const size_t r = idx / inter;
    const size_t i = idx - r * inter;
    const float g = gu[r * 2 * inter + i];
    const float u = gu[r * 2 * inter + inter + i];
    out[idx] = __float2half_rn(g / (1.0f + expf(-g)) * u);
  }
}

}  // namespace

void rt_cuda_swiglu(const float * gu, int n_rows, int inter, __half * out, cudaStream_t stream) {
  const size_t total = static_cast<size_t>(n_rows) * inter;
  if (total == 0) return;
  const int blocks = static_cast<int>((total + 255) / 256 < 65535 ? (total + 255) / 256 : 65535);
  rt_cuda::launch("swiglu_kernel", swiglu_kernel, blocks, 256, 0, stream, gu, total, inter, out);
  RT_CUDA_LAUNCH_CHECK();
}
