#include "cuda/embedding.cuh"

#include "cuda/common.cuh"

namespace {

__global__ void embedding_kernel(const int * ids, const __half * table, int vocab, int hidden, float * x) {
  const int t = blockIdx.x;
  const int id = ids[t];
  const bool ok = id >= 0 && id < vocab;
  for (int i = threadIdx.x; i < hidden; i += blockDim.x) {
    x[static_cast<size_t>(t) * hidden + i] = ok ? __half2float(table[static_cast<size_t>(id) * hidden + i]) : 0.0f;
  }
}

}  // namespace

void rt_cuda_embedding(const int * ids, int n, const __half * table, int vocab, int hidden, float * x,
                       cudaStream_t stream) {
  if (n <= 0) return;
  embedding_kernel<<<n, 256, 0, stream>>>(ids, table, vocab, hidden, x);
  RT_CUDA_LAUNCH_CHECK();
}
