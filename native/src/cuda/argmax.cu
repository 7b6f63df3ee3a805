#include "cuda/argmax.cuh"

#include "cuda/argmax-block.cuh"
#include "cuda/common.cuh"

namespace {

__global__ void __launch_bounds__(RT_ARGMAX_THREADS) argmax_kernel(const float * logits, int n_cols, int ld, int * out) {
  rt_cuda::follow_prior_grids();
  rt_cuda::argmax_row(logits + static_cast<size_t>(blockIdx.x) * ld, n_cols, out + blockIdx.x);
}

}  // namespace

void rt_cuda_argmax(const float * logits, int n_rows, int n_cols, int ld, int * out, cudaStream_t stream) {
  if (n_rows <= 0) return;
  rt_cuda::launch("argmax_kernel", argmax_kernel, n_rows, RT_ARGMAX_THREADS, 0, stream, logits, n_cols, ld, out);
  RT_CUDA_LAUNCH_CHECK();
}
