#include "cuda/matmul-f16.cuh"

#include <algorithm>

#include "cuda/common.cuh"

namespace {

using rt_cuda::padded_col;
using rt_cuda::padded_len;

constexpr int R = RT_F16_ROWS_PER_WARP;
constexpr int THREADS = RT_F16_WARPS * 32;

// Requires cols % 8 == 0: each lane reads 16 bytes (8 columns) of a row per step. TB: token tile in registers.
template <int TB>
__global__ void __launch_bounds__(THREADS) f16_fast(rt_cuda_f16_args a, int tok_cap) {
  rt_cuda::follow_prior_grids();
  extern __shared__ float4 smem4[];
  float * xs = reinterpret_cast<float *>(smem4);
  const int warp = threadIdx.x >> 5;
  const int lane = threadIdx.x & 31;
  const int row0 = (blockIdx.x * RT_F16_WARPS + warp) * R;
  const int cols = a.cols;
  const int plen = padded_len(cols);
  const int half_cols = cols / 2;

  for (int chunk = 0; chunk < a.n; chunk += tok_cap) {
    const int nt = min(tok_cap, a.n - chunk);
    __syncthreads();
    for (int i = threadIdx.x; i < nt * half_cols; i += THREADS) {
      const int j = i / half_cols;
      const int c2 = (i - j * half_cols) * 2;
      const int xr = a.rows_in != nullptr ? a.rows_in[chunk + j] : chunk + j;
      const float2 f = __half22float2(*reinterpret_cast<const __half2 *>(a.x + static_cast<size_t>(xr) * a.ldx + c2));
      float * dst = xs + j * plen + padded_col(c2);
      dst[0] = f.x;
      dst[1] = f.y;
    }
    __syncthreads();
    if (row0 >= a.rows) continue;

    float acc[R][TB];
#pragma unroll
    for (int r = 0; r < R; ++r)
#pragma unroll
      for (int j = 0; j < TB; ++j) acc[r][j] = 0.0f;

    for (int c = lane * 8; c < cols; c += 32 * 8) {
      float wv[R][8];
#pragma unroll
      for (int r = 0; r < R; ++r) {
        const int row = row0 + r;
        uint4 v = make_uint4(0, 0, 0, 0);
        if (row < a.rows) v = __ldg(reinterpret_cast<const uint4 *>(a.w + static_cast<size_t>(row) * cols + c));
        const __half2 * h = reinterpret_cast<const __half2 *>(&v);
#pragma unroll
        for (int i = 0; i < 4; ++i) {
          const float2 f = __half22float2(h[i]);
          wv[r][2 * i] = f.x;
          wv[r][2 * i + 1] = f.y;
        }
      }
      const float * xbase = xs + padded_col(c);
#pragma unroll
      for (int j = 0; j < TB; ++j) {
        if (j < nt) {
          const float4 lo = *reinterpret_cast<const float4 *>(xbase + j * plen);
          const float4 hi = *reinterpret_cast<const float4 *>(xbase + j * plen + 4);
          const float xv[8] = {lo.x, lo.y, lo.z, lo.w, hi.x, hi.y, hi.z, hi.w};
#pragma unroll
          for (int r = 0; r < R; ++r) {
#pragma unroll
            for (int i = 0; i < 8; ++i) acc[r][j] = fmaf(wv[r][i], xv[i], acc[r][j]);
          }
        }
      }
    }

    rt_cuda::store_warp_rows<R, TB>(acc, nt, row0, a.rows, chunk, a.rows_out, a.y, a.ldy, a.accumulate);
  }
}

__global__ void f16_generic(rt_cuda_f16_args a) {
  rt_cuda::follow_prior_grids();
  const int row = blockIdx.x * blockDim.x + threadIdx.x;
  if (row >= a.rows) return;
  for (int e = static_cast<int>(blockIdx.y); e < a.n; e += static_cast<int>(gridDim.y)) {
    const int xr = a.rows_in != nullptr ? a.rows_in[e] : e;
    const __half * x = a.x + static_cast<size_t>(xr) * a.ldx;
    const __half * w = a.w + static_cast<size_t>(row) * a.cols;
    float acc = 0.0f;
    for (int c = 0; c < a.cols; ++c) acc = fmaf(__half2float(w[c]), __half2float(x[c]), acc);
    const int yr = a.rows_out != nullptr ? a.rows_out[e] : e;
    float * dst = a.y + static_cast<size_t>(yr) * a.ldy + row;
    *dst = a.accumulate ? *dst + acc : acc;
  }
}

int max_dynamic_smem() {
  // Per call: the device current on this thread may differ from the last call's.
  return rt_cuda_allow_optin_smem(
      {reinterpret_cast<const void *>(f16_fast<1>), reinterpret_cast<const void *>(f16_fast<RT_F16_TOKEN_TILE>)});
}

}  // namespace

namespace {

bool cuda_cores_fit(const rt_cuda_f16_args & a) {
  // The CUDA-core kernel holds at least one padded activation row in shared memory.
  return a.cols % 8 == 0 && padded_len(a.cols) * static_cast<int>(sizeof(float)) <= max_dynamic_smem();
}

}  // namespace

rt_f16_kernel rt_cuda_f16_choice(const rt_cuda_f16_args & a) {
  switch (a.kernel) {
    case rt_f16_kernel::mma: return rt_cuda_f16_mma_fits(a) ? a.kernel : rt_f16_kernel::generic;
    case rt_f16_kernel::gemv:
    case rt_f16_kernel::gemv_split: return rt_cuda_f16_gemv_fits(a) ? a.kernel : rt_f16_kernel::generic;
    case rt_f16_kernel::cuda_cores: return cuda_cores_fit(a) ? a.kernel : rt_f16_kernel::generic;
    case rt_f16_kernel::generic: return a.kernel;
    default: break;
  }
  if (a.n >= (a.mma_min_tokens > 0 ? a.mma_min_tokens : RT_F16_MMA_MIN_TOKENS)) {
    if (rt_cuda_f16_mma_fits(a)) return rt_f16_kernel::mma;
    // Below sm_80: the shared-memory kernel reuses each weight for 8 tokens (the GEMV for 4).
    if (cuda_cores_fit(a)) return rt_f16_kernel::cuda_cores;
  }
  if (rt_cuda_f16_gemv_fits(a)) {
    return rt_cuda_f16_gemv_splits_columns(a.rows, a.gemv_blocks_per_sm) ? rt_f16_kernel::gemv_split
                                                                          : rt_f16_kernel::gemv;
  }
  return cuda_cores_fit(a) ? rt_f16_kernel::cuda_cores : rt_f16_kernel::generic;
}

void rt_cuda_matmul_f16(const rt_cuda_f16_args & args, cudaStream_t stream) {
  if (args.rows <= 0 || args.n <= 0) return;
  const rt_f16_kernel k = rt_cuda_f16_choice(args);
  rt_cuda_f16_args a = args;
  const bool tail_in_launch = (k == rt_f16_kernel::gemv || k == rt_f16_kernel::gemv_split) &&
                              rt_cuda_matmul_tail_in_launch(a.tail, a.rows, a.ldy);
  if (!tail_in_launch) a.tail.kind = rt_matmul_tail_kind::none;
  if (k == rt_f16_kernel::mma) {
    rt_cuda_f16_mma(a, stream);
  } else if (k == rt_f16_kernel::gemv) {
    rt_cuda_f16_gemv(a, stream);
  } else if (k == rt_f16_kernel::gemv_split) {
    rt_cuda_f16_gemv_split(a, stream);
  } else if (k == rt_f16_kernel::cuda_cores) {
    const int row_bytes = padded_len(a.cols) * static_cast<int>(sizeof(float));
    const int tok_cap = std::max(1, std::min({RT_F16_TOKEN_TILE, a.n, max_dynamic_smem() / row_bytes}));
    const int rows_per_block = R * RT_F16_WARPS;
    const int grid = (a.rows + rows_per_block - 1) / rows_per_block;
    const size_t smem = static_cast<size_t>(tok_cap) * row_bytes;
    if (tok_cap == 1) {
      rt_cuda::launch("f16_fast<1>", f16_fast<1>, grid, THREADS, smem, stream, a, 1);
    } else {
      rt_cuda::launch("f16_fast<RT_F16_TOKEN_TILE>", f16_fast<RT_F16_TOKEN_TILE>, grid, THREADS, smem, stream, a,
                      tok_cap);
    }
    RT_CUDA_LAUNCH_CHECK();
  } else {
    const dim3 grid((a.rows + 127) / 128, std::min(a.n, 64));
    rt_cuda::launch("f16_generic", f16_generic, grid, 128, 0, stream, a);
    RT_CUDA_LAUNCH_CHECK();
  }
  if (!tail_in_launch) rt_cuda_matmul_tail_launch(args.tail, args.y, args.rows, args.ldy, stream);
}
