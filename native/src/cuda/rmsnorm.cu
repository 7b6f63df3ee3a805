#include "cuda/rmsnorm.cuh"

#include "cuda/common.cuh"

namespace {

__global__ void __launch_bounds__(RT_RMSNORM_THREADS)
    rmsnorm_kernel(const float * x, int ldx, const __half * w, float eps, int n, __half * y16, float * y32, int ldy) {
  __shared__ float scratch[32];
  const float * xr = x + static_cast<size_t>(blockIdx.x) * ldx;
  float ss = 0.0f;
  for (int i = threadIdx.x; i < n; i += blockDim.x) ss = fmaf(xr[i], xr[i], ss);
  ss = rt_cuda::block_sum(ss, scratch);
  const float inv = rsqrtf(ss / static_cast<float>(n) + eps);
  for (int i = threadIdx.x; i < n; i += blockDim.x) {
    const float v = xr[i] * inv * __half2float(w[i]);
    if (y16 != nullptr) {
      y16[static_cast<size_t>(blockIdx.x) * ldy + i] = __float2half_rn(v);
    } else {
      y32[static_cast<size_t>(blockIdx.x) * ldy + i] = v;
    }
  }
}

}  // namespace

void rt_cuda_rmsnorm(const float * x, int ldx, const __half * w, float eps, int n_rows, int n, __half * y_f16,
                     float * y_f32, int ldy, cudaStream_t stream) {
  if (n_rows <= 0) return;
  rmsnorm_kernel<<<n_rows, RT_RMSNORM_THREADS, 0, stream>>>(x, ldx, w, eps, n, y_f16, y_f32, ldy);
  RT_CUDA_LAUNCH_CHECK();
}
