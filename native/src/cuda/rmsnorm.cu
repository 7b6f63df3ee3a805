#include "cuda/rmsnorm.cuh"

#include "cuda/common.cuh"
#include "cuda/rmsnorm-block.cuh"

namespace {

__global__ void __launch_bounds__(RT_RMSNORM_THREADS)
    rmsnorm_kernel(const float * x, int ldx, const __half * w, float eps, int n, __half * y16, float * y32, int ldy) {
  rt_cuda::follow_prior_grids();
  __shared__ float scratch[32];
  const size_t t = blockIdx.x;
  rt_cuda::rmsnorm_row(x + t * ldx, w, eps, n, y16 != nullptr ? y16 + t * ldy : nullptr,
                       y16 != nullptr ? nullptr : y32 + t * ldy, scratch);
}

}  // namespace

void rt_cuda_rmsnorm(const float * x, int ldx, const __half * w, float eps, int n_rows, int n, __half * y_f16,
                     float * y_f32, int ldy, cudaStream_t stream) {
  if (n_rows <= 0) return;
  rt_cuda::launch("rmsnorm_kernel", rmsnorm_kernel, n_rows, RT_RMSNORM_THREADS, 0, stream, x, ldx, w, eps, n, y_f16,
                  y_f32, ldy);
  RT_CUDA_LAUNCH_CHECK();
}
