#include "cuda/embedding.cuh"

#include "cuda/common.cuh"
#include "cuda/rmsnorm-block.cuh"

namespace {

constexpr int THREADS = 256;

__global__ void __launch_bounds__(THREADS) embedding_kernel(const int * ids, const __half * table, int vocab, int hidden,
                                                            float * x, const __half * norm_w, float eps, __half * xn) {
  rt_cuda::follow_prior_grids();
  __shared__ float scratch[32];
  const int t = blockIdx.x;
  const int id = ids[t];
  const bool ok = id >= 0 && id < vocab;
  float * xr = x + static_cast<size_t>(t) * hidden;
  for (int i = threadIdx.x; i < hidden; i += blockDim.x) {
    xr[i] = ok ? __half2float(table[static_cast<size_t>(id) * hidden + i]) : 0.0f;
  }
  if (norm_w != nullptr) rt_cuda::rmsnorm_row(xr, norm_w, eps, hidden, xn + static_cast<size_t>(t) * hidden, nullptr, scratch);
}

}  // namespace

void rt_cuda_embedding(const int * ids, int n, const __half * table, int vocab, int hidden, float * x,
                       const __half * norm_w, float eps, __half * xn, cudaStream_t stream) {
  if (n <= 0) return;
  rt_cuda::launch("embedding_kernel", embedding_kernel, n, THREADS, 0, stream, ids, table, vocab, hidden, x, norm_w,
                  eps, xn);
  RT_CUDA_LAUNCH_CHECK();
}
