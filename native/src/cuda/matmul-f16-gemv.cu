// Dense FP16 GEMV for decode (1-3 tokens): no shared memory and no block barrier. Each warp reads R rows, a lane 16
// bytes of each per 256 columns, two such steps' loads issued before either is used, and the activations straight
// from global memory (L1 serves the other warps); FP32 sums. At batch 1 these weights (attention, router, LM head)
// are most of the bytes a token reads.
#include "cuda/common.cuh"
#include "cuda/matmul-f16.cuh"
#include "cuda/matmul-tail-block.cuh"

namespace {

constexpr int WARPS = 4;
constexpr int THREADS = WARPS * 32;
constexpr int STEP_COLS = 32 * 8;

template <int R, int TB>
__device__ __forceinline__ void gemv_rows(const rt_cuda_f16_args & a) {
  const int lane = threadIdx.x & 31;
  const int row0 = (static_cast<int>(blockIdx.x) * WARPS + static_cast<int>(threadIdx.x >> 5)) * R;
  if (row0 >= a.rows) return;
  const __half * wr[R];
#pragma unroll
  for (int r = 0; r < R; ++r) wr[r] = row0 + r < a.rows ? a.w + static_cast<size_t>(row0 + r) * a.cols : nullptr;
  for (int t0 = 0; t0 < a.n; t0 += TB) {
    const int nt = min(TB, a.n - t0);
    const __half * xr[TB];
#pragma unroll
    for (int j = 0; j < TB; ++j) {
      const int e = t0 + j;
      xr[j] = j < nt ? a.x + static_cast<size_t>(a.rows_in != nullptr ? a.rows_in[e] : e) * a.ldx : nullptr;
    }
    float acc[R][TB];
#pragma unroll
    for (int r = 0; r < R; ++r)
#pragma unroll
      for (int j = 0; j < TB; ++j) acc[r][j] = 0.0f;
    for (int c0 = lane * 8; c0 < a.cols; c0 += 2 * STEP_COLS) {
      uint4 w[2][R];
      const uint4 z = make_uint4(0, 0, 0, 0);
#pragma unroll
      for (int u = 0; u < 2; ++u) {
        const int c = c0 + u * STEP_COLS;
#pragma unroll
        for (int r = 0; r < R; ++r) w[u][r] = wr[r] != nullptr && c < a.cols ? __ldg(reinterpret_cast<const uint4 *>(wr[r] + c)) : z;
      }
#pragma unroll
      for (int u = 0; u < 2; ++u) {
        const int c = c0 + u * STEP_COLS;
        if (c >= a.cols) break;
#pragma unroll
        for (int j = 0; j < TB; ++j) {
          if (j < nt) {
            float xv[8];
            rt_cuda::load_x8(xr[j] + c, xv);
#pragma unroll
            for (int r = 0; r < R; ++r) {
              const __half2 * wh = reinterpret_cast<const __half2 *>(&w[u][r]);
#pragma unroll
              for (int k = 0; k < 4; ++k) {
                const float2 f = __half22float2(wh[k]);
                acc[r][j] = fmaf(f.x, xv[2 * k], acc[r][j]);
                acc[r][j] = fmaf(f.y, xv[2 * k + 1], acc[r][j]);
              }
            }
          }
        }
      }
    }
    rt_cuda::store_warp_rows<R, TB>(acc, nt, row0, a.rows, t0, a.rows_out, a.y, a.ldy, a.accumulate);
  }
}

template <int R, int TB>
__global__ void __launch_bounds__(THREADS) f16_gemv(rt_cuda_f16_args a) {
  extern __shared__ int tail_smem[];
  gemv_rows<R, TB>(a);
  rt_cuda::finish_with_tail(a.tail, a.y, a.rows, a.ldy, tail_smem);
}

template <int R, int TB>
void launch(const rt_cuda_f16_args & a, cudaStream_t stream) {
  const int per_block = R * WARPS;
  const size_t smem = rt_cuda_matmul_tail_smem(a.tail, a.rows, WARPS);
  f16_gemv<R, TB><<<(a.rows + per_block - 1) / per_block, THREADS, smem, stream>>>(a);
}

}  // namespace

bool rt_cuda_f16_gemv_fits(const rt_cuda_f16_args & a) { return a.cols % 8 == 0 && a.ldx % 8 == 0; }

void rt_cuda_f16_gemv(const rt_cuda_f16_args & a, cudaStream_t stream) {
  if (a.n == 1) {
    launch<8, 1>(a, stream);
  } else {
    launch<4, 4>(a, stream);
  }
  RT_CUDA_LAUNCH_CHECK();
}
