#include "cuda/argmax.cuh"

#include "cuda/common.cuh"

namespace {

__global__ void __launch_bounds__(RT_ARGMAX_THREADS) argmax_kernel(const float * logits, int n_cols, int ld, int * out) {
  __shared__ float sv[32];
  __shared__ int si[32];
  __shared__ int sn[32];
  const float * row = logits + static_cast<size_t>(blockIdx.x) * ld;
  float bv = -INFINITY;
  int bi = n_cols;
  int nan = 0;
  // One block a row (a batch-1 step has one row): four independent loads in flight per thread, since a loop of one
  // load at a time waits out the memory latency once per element (81 us for OLMoE's 50,304 logits with 256 threads).
  constexpr int UNROLL = 4;
  const int stride = blockDim.x * UNROLL;
  for (int base = threadIdx.x; base < n_cols; base += stride) {
    float v[UNROLL];
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) {
      const int i = base + u * static_cast<int>(blockDim.x);
      v[u] = i < n_cols ? row[i] : -INFINITY;
    }
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) {
      const int i = base + u * static_cast<int>(blockDim.x);
      if (i >= n_cols) continue;
      if (isnan(v[u])) {
        nan = 1;
      } else if (rt_cuda::argmax_better(v[u], i, bv, bi)) {
        bv = v[u];
        bi = i;
      }
    }
  }
  rt_cuda::warp_argmax(bv, bi);
  for (int o = 16; o > 0; o >>= 1) nan |= __shfl_xor_sync(0xffffffffu, nan, o);
  const int lane = threadIdx.x & 31;
  const int warp = threadIdx.x >> 5;
  if (lane == 0) {
    sv[warp] = bv;
    si[warp] = bi;
    sn[warp] = nan;
  }
  __syncthreads();
  if (warp == 0) {
    const int n_warps = blockDim.x >> 5;
    bv = lane < n_warps ? sv[lane] : -INFINITY;
    bi = lane < n_warps ? si[lane] : n_cols;
    nan = lane < n_warps ? sn[lane] : 0;
    rt_cuda::warp_argmax(bv, bi);
    for (int o = 16; o > 0; o >>= 1) nan |= __shfl_xor_sync(0xffffffffu, nan, o);
    if (lane == 0) out[blockIdx.x] = nan ? -1 : (bi < n_cols ? bi : 0);
  }
}

}  // namespace

void rt_cuda_argmax(const float * logits, int n_rows, int n_cols, int ld, int * out, cudaStream_t stream) {
  if (n_rows <= 0) return;
  argmax_kernel<<<n_rows, RT_ARGMAX_THREADS, 0, stream>>>(logits, n_cols, ld, out);
  RT_CUDA_LAUNCH_CHECK();
}
