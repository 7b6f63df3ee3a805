#include "cuda/matmul-w4a16.cuh"

#include <algorithm>

#include "cuda/common.cuh"
#include "cuda/w4a16-common.cuh"
#include "cuda/swiglu.cuh"
#include "quant/qpacked.h"

namespace {

using rt_cuda::padded_col;
using rt_cuda::padded_len;

constexpr int R = RT_W4A16_ROWS_PER_WARP;
constexpr int THREADS = RT_W4A16_WARPS * 32;

// Activation pair (c, c + 1) of x row xr (c even).
__device__ __forceinline__ float2 load_x2(const rt_cuda_w4a16_args & a, int xr, int c) {
  return __half22float2(*reinterpret_cast<const __half2 *>(a.x + static_cast<size_t>(xr) * a.ldx + c));
}

// The qpacked-v2 codebook as floats. A 16-entry shared table is read without bank conflicts (16 words, 16 banks).
constexpr int kLevelFloats = 16;
__constant__ float kLevels[kLevelFloats] = {RT_HQ4_LEVELS};

__device__ __forceinline__ void load_levels(float * lut) {
  if (threadIdx.x < kLevelFloats) lut[threadIdx.x] = kLevels[threadIdx.x];
}

// K[u] of nibble i of w.
__device__ __forceinline__ float level(const float * lut, uint32_t w, int i) { return lut[(w >> (4 * i)) & 0xFu]; }

// Requires cols % 32 == 0 and group_size % 8 == 0: each lane reads 16 bytes (32 columns) per step. TB is the token
// tile held in registers: 1 for decode (fewer registers, more resident warps) or RT_W4A16_TOKEN_TILE.
template <int TB>
__global__ void __launch_bounds__(THREADS) w4a16_fast(rt_cuda_w4a16_args a, int tok_cap) {
  rt_cuda::follow_prior_grids();
  // Dynamic shared memory: the codebook (16 floats, kept in the dynamic part so the opted-in size is the whole
  // budget), then the activation rows.
  extern __shared__ float4 smem4[];
  float * lut = reinterpret_cast<float *>(smem4);
  float * xs = lut + kLevelFloats;
  int begin = 0, end = 0;
  const int g = rt_cuda::w4a16_group(a, static_cast<int>(blockIdx.y), begin, end);
  if (g < 0) return;
  const uint8_t * qw = a.qweight[g];
  const __half * sc = a.scales[g];
  if (begin >= end || qw == nullptr) return;
  load_levels(lut);  // published by the first __syncthreads of the chunk loop

  const int warp = threadIdx.x >> 5;
  const int lane = threadIdx.x & 31;
  const int row0 = (blockIdx.x * RT_W4A16_WARPS + warp) * R;
  const int cols = a.cols;
  const int plen = padded_len(cols);
  const int qstride = cols / 2;
  const int gpr = cols / a.group_size;
  const bool one_scale_per_lane_step = (a.group_size % 32) == 0;
  const int half_cols = cols / 2;

  for (int chunk = begin; chunk < end; chunk += tok_cap) {
    const int nt = min(tok_cap, end - chunk);
    __syncthreads();
    for (int i = threadIdx.x; i < nt * half_cols; i += THREADS) {
      const int j = i / half_cols;
      const int c2 = (i - j * half_cols) * 2;
      const int xr = a.rows_in != nullptr ? a.rows_in[chunk + j] : chunk + j;
      const float2 f = load_x2(a, xr, c2);
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

    for (int c = lane * 32; c < cols; c += 32 * 32) {
      uint32_t q[R][4];
      float s[R][4];
#pragma unroll
      for (int r = 0; r < R; ++r) {
        const int row = row0 + r;
        if (row < a.rows) {
          const uint4 v = __ldg(reinterpret_cast<const uint4 *>(qw + static_cast<size_t>(row) * qstride + c / 2));
          q[r][0] = v.x;
          q[r][1] = v.y;
          q[r][2] = v.z;
          q[r][3] = v.w;
          rt_cuda::word_scales(sc + static_cast<size_t>(row) * gpr, c, a.group_size, one_scale_per_lane_step, true, s[r]);
        } else {
#pragma unroll
          for (int k = 0; k < 4; ++k) {
            q[r][k] = 0x88888888u;  // any code: the zero scale makes it 0
            s[r][k] = 0.0f;
          }
        }
      }
      const float * xbase = xs + padded_col(c);
#pragma unroll
      for (int k = 0; k < 4; ++k) {
        float xv[TB][8];
#pragma unroll
        for (int j = 0; j < TB; ++j) {
          if (j < nt) {
            const float4 lo = *reinterpret_cast<const float4 *>(xbase + j * plen + 8 * k);
            const float4 hi = *reinterpret_cast<const float4 *>(xbase + j * plen + 8 * k + 4);
            xv[j][0] = lo.x; xv[j][1] = lo.y; xv[j][2] = lo.z; xv[j][3] = lo.w;
            xv[j][4] = hi.x; xv[j][5] = hi.y; xv[j][6] = hi.z; xv[j][7] = hi.w;
          }
        }
#pragma unroll
        for (int r = 0; r < R; ++r) {
          float dq[8];
#pragma unroll
          for (int i = 0; i < 8; ++i) dq[i] = level(lut, q[r][k], i);
#pragma unroll
          for (int j = 0; j < TB; ++j) {
            if (j < nt) {
              float d = 0.0f;
#pragma unroll
              for (int i = 0; i < 8; ++i) d = fmaf(dq[i], xv[j][i], d);
              acc[r][j] = fmaf(d, s[r][k], acc[r][j]);
            }
          }
        }
      }
    }

    rt_cuda::store_warp_rows<R, TB>(acc, nt, row0, a.rows, chunk, a.rows_out, a.y, a.ldy, a.accumulate);
  }
}

// Any even cols and group size: one thread per (row, entry). Used for shapes the fast kernel cannot read.
__global__ void w4a16_generic(rt_cuda_w4a16_args a) {
  rt_cuda::follow_prior_grids();
  int begin = 0, end = 0;
  const int g = rt_cuda::w4a16_group(a, static_cast<int>(blockIdx.y), begin, end);
  if (g < 0) return;
  const uint8_t * qw = a.qweight[g];
  const __half * sc = a.scales[g];
  if (qw == nullptr) return;
  __shared__ float lut[kLevelFloats];
  load_levels(lut);
  __syncthreads();
  const int row = blockIdx.x * blockDim.x + threadIdx.x;
  if (row >= a.rows) return;
  const int gpr = a.cols / a.group_size;
  for (int e = begin + static_cast<int>(blockIdx.z); e < end; e += static_cast<int>(gridDim.z)) {
    const int xr = a.rows_in != nullptr ? a.rows_in[e] : e;
    float acc = 0.0f;
    for (int gi = 0; gi < gpr; ++gi) {
      float part = 0.0f;
      for (int c = gi * a.group_size; c < (gi + 1) * a.group_size; c += 2) {
        const uint8_t b = qw[static_cast<size_t>(row) * (a.cols / 2) + c / 2];
        const float2 xv = load_x2(a, xr, c);
        part = fmaf(lut[b & 0xF], xv.x, part);
        part = fmaf(lut[b >> 4], xv.y, part);
      }
      acc = fmaf(part, __half2float(sc[static_cast<size_t>(row) * gpr + gi]), acc);
    }
    const int yr = a.rows_out != nullptr ? a.rows_out[e] : e;
    float * dst = a.y + static_cast<size_t>(yr) * a.ldy + row;
    *dst = a.accumulate ? *dst + acc : acc;
  }
}

int max_dynamic_smem() {
  // Per call: the device current on this thread may differ from the last call's.
  return rt_cuda_allow_optin_smem(
      {reinterpret_cast<const void *>(w4a16_fast<1>), reinterpret_cast<const void *>(w4a16_fast<RT_W4A16_TOKEN_TILE>)});
}

}  // namespace

namespace {

bool smem_tiled_fits(const rt_cuda_w4a16_args & a) {
  const int row_bytes = padded_len(a.cols) * static_cast<int>(sizeof(float));
  // The tiled kernel holds at least one padded activation row in shared memory.
  const int level_bytes = kLevelFloats * static_cast<int>(sizeof(float));
  return a.cols % 32 == 0 && a.group_size % 8 == 0 && row_bytes <= max_dynamic_smem() - level_bytes;
}

void smem_tiled(const rt_cuda_w4a16_args & a, cudaStream_t stream) {
  const int row_bytes = padded_len(a.cols) * static_cast<int>(sizeof(float));
  const int level_bytes = kLevelFloats * static_cast<int>(sizeof(float));
  const int smem_limit = max_dynamic_smem() - level_bytes;
  int most = a.offsets == nullptr ? a.n_entries : (a.max_group_entries > 0 ? a.max_group_entries : RT_W4A16_TOKEN_TILE);
  most = std::max(1, std::min(most, RT_W4A16_TOKEN_TILE));
  const int tok_cap = std::max(1, std::min(most, smem_limit / row_bytes));
  const int rows_per_block = R * RT_W4A16_WARPS;
  const int grid_rows = rt_cuda_w4a16_grid_rows(a);
  if (grid_rows <= 0) return;
  const dim3 grid((a.rows + rows_per_block - 1) / rows_per_block, grid_rows);
  const size_t smem = static_cast<size_t>(level_bytes) + static_cast<size_t>(tok_cap) * row_bytes;
  if (tok_cap == 1) {
    rt_cuda::launch("w4a16_fast<1>", w4a16_fast<1>, grid, THREADS, smem, stream, a, 1);
  } else {
    rt_cuda::launch("w4a16_fast<RT_W4A16_TOKEN_TILE>", w4a16_fast<RT_W4A16_TOKEN_TILE>, grid, THREADS, smem, stream, a,
                    tok_cap);
  }
  RT_CUDA_LAUNCH_CHECK();
}

void generic(const rt_cuda_w4a16_args & a, cudaStream_t stream) {
  const int grid_rows = rt_cuda_w4a16_grid_rows(a);
  if (grid_rows <= 0) return;
  const dim3 grid((a.rows + 127) / 128, grid_rows, 8);
  rt_cuda::launch("w4a16_generic", w4a16_generic, grid, 128, 0, stream, a);
  RT_CUDA_LAUNCH_CHECK();
}

bool fits(rt_w4a16_kernel k, const rt_cuda_w4a16_args & a) {
  switch (k) {
    case rt_w4a16_kernel::mma: return rt_cuda_w4a16_mma_fits(a);
    case rt_w4a16_kernel::gemv: return rt_cuda_w4a16_gemv_fits(a);
    case rt_w4a16_kernel::smem_tiled: return smem_tiled_fits(a);
    default: return true;
  }
}

}  // namespace

rt_w4a16_kernel rt_cuda_w4a16_choice(const rt_cuda_w4a16_args & a) {
  if (a.kernel != rt_w4a16_kernel::automatic) return fits(a.kernel, a) ? a.kernel : rt_w4a16_kernel::generic;
  if (rt_cuda_w4a16_mean_entries(a) >= (a.mma_min_entries > 0 ? a.mma_min_entries : RT_W4A16_MMA_MIN_ENTRIES)) {
    if (rt_cuda_w4a16_mma_fits(a)) return rt_w4a16_kernel::mma;
    // Below sm_80 the kernel measured on the GPU so far keeps batched steps.
    if (smem_tiled_fits(a)) return rt_w4a16_kernel::smem_tiled;
  }
  if (rt_cuda_w4a16_gemv_fits(a)) return rt_w4a16_kernel::gemv;
  return rt_w4a16_kernel::generic;
}

void rt_cuda_matmul_w4a16(const rt_cuda_w4a16_args & args, cudaStream_t stream) {
  if (args.rows <= 0 || args.n_groups <= 0) return;
  const rt_w4a16_kernel k = rt_cuda_w4a16_choice(args);
  rt_cuda_w4a16_args a = args;
  // Not the argmax: its in-launch form wants each block's output rows, which a grouped launch's blocks share.
  const bool tail_in_launch = k == rt_w4a16_kernel::gemv && a.y_swiglu == nullptr && rt_cuda_w4a16_grid_rows(a) > 0 &&
                              a.tail.kind != rt_matmul_tail_kind::argmax &&
                              rt_cuda_matmul_tail_in_launch(a.tail, a.rows, a.ldy);
  if (!tail_in_launch) a.tail.kind = rt_matmul_tail_kind::none;
  const bool fused = k == rt_w4a16_kernel::mma || k == rt_w4a16_kernel::gemv;
  if (a.y_swiglu != nullptr && !fused) {
    // No SwiGLU epilogue in these kernels: the projections go to y, then one SwiGLU pass.
    rt_cuda_w4a16_args plain = a;
    plain.y_swiglu = nullptr;
    plain.kernel = k;
    rt_cuda_matmul_w4a16(plain, stream);
    rt_cuda_swiglu(a.y, a.swiglu_rows, a.rows / 2, a.y_swiglu, stream);
  } else {
    switch (k) {
      case rt_w4a16_kernel::mma: rt_cuda_w4a16_mma(a, stream); break;
      case rt_w4a16_kernel::gemv: rt_cuda_w4a16_gemv(a, stream); break;
      case rt_w4a16_kernel::smem_tiled: smem_tiled(a, stream); break;
      default: generic(a, stream); break;
    }
  }
  if (!tail_in_launch) rt_cuda_matmul_tail_launch(args.tail, args.y, args.rows, args.ldy, stream);
}
