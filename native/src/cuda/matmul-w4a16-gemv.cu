// W4A16 GEMV for decode: a few entries a group. No shared memory and no block barrier: each warp reads R rows'
// codes (16 bytes a lane a row per 1,024 columns, all R rows' loads issued before any is used) and the activations
// straight from global memory (L1 serves the other warps), unpacks codes in registers (hq4-unpack.cuh) and sums in
// FP32. In SwiGLU mode a warp's rows are R/2 gate rows and the R/2 up rows that pair with them.
#include "cuda/common.cuh"
#include "cuda/hq4-unpack.cuh"
#include "cuda/matmul-tail-block.cuh"
#include "cuda/matmul-w4a16.cuh"
#include "cuda/w4a16-common.cuh"

namespace {

constexpr int WARPS = 4;
constexpr int THREADS = WARPS * 32;
constexpr int LANE_COLS = 32;
constexpr int PASS_COLS = 32 * LANE_COLS;


// R rows a warp, TB entries at a time.
template <int R, int TB>
__device__ __forceinline__ void gemv_rows(const rt_cuda_w4a16_args & a) {
  int begin = 0, end = 0;
  const int g = rt_cuda::w4a16_group(a, static_cast<int>(blockIdx.y), begin, end);
  if (g < 0 || begin >= end) return;
  const uint8_t * qw = a.qweight[g];
  const __half * sc = a.scales[g];
  if (qw == nullptr) return;
  const int lane = threadIdx.x & 31;
  const bool sw = a.y_swiglu != nullptr;
  const int half_rows = a.rows / 2;
  const int unit_rows = sw ? R / 2 : R;
  const int first = (static_cast<int>(blockIdx.x) * WARPS + static_cast<int>(threadIdx.x >> 5)) * unit_rows;
  if (first >= (sw ? half_rows : a.rows)) return;
  int row[R];
  bool ok[R];
#pragma unroll
  for (int r = 0; r < R; ++r) {
    if (sw) {
      const int u = first + (r % (R / 2));
      row[r] = (r < R / 2 ? 0 : half_rows) + u;
      ok[r] = u < half_rows;
    } else {
      row[r] = first + r;
      ok[r] = row[r] < a.rows;
    }
  }
  const int cols = a.cols;
  const int qstride = cols / 2;
  const int gpr = cols / a.group_size;
  const bool one_scale = a.group_size % LANE_COLS == 0;

  for (int e0 = begin; e0 < end; e0 += TB) {
    const int nt = min(TB, end - e0);
    const __half * xr[TB];
#pragma unroll
    for (int j = 0; j < TB; ++j) xr[j] = j < nt ? a.x + static_cast<size_t>(rt_cuda::in_row(a, e0 + j)) * a.ldx : nullptr;
    float acc[R][TB];
#pragma unroll
    for (int r = 0; r < R; ++r)
#pragma unroll
      for (int j = 0; j < TB; ++j) acc[r][j] = 0.0f;

    for (int c = lane * LANE_COLS; c < cols; c += PASS_COLS) {
      uint4 q[R];
      float s[R][4];
#pragma unroll
      for (int r = 0; r < R; ++r) {
        q[r] = ok[r] ? __ldg(reinterpret_cast<const uint4 *>(qw + static_cast<size_t>(row[r]) * qstride + c / 2))
                     : make_uint4(0, 0, 0, 0);
      }
#pragma unroll
      for (int r = 0; r < R; ++r) rt_cuda::word_scales(sc + static_cast<size_t>(row[r]) * gpr, c, a.group_size, one_scale, ok[r], s[r]);
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        float lv[R][8];
#pragma unroll
        for (int r = 0; r < R; ++r) {
          uint32_t lo, hi;
          rt_cuda::hq4::shifted_bytes(rt_cuda::word(q[r], i), lo, hi);
          lv[r][0] = rt_cuda::hq4::level_f32<0>(lo);
          lv[r][1] = rt_cuda::hq4::level_f32<1>(lo);
          lv[r][2] = rt_cuda::hq4::level_f32<2>(lo);
          lv[r][3] = rt_cuda::hq4::level_f32<3>(lo);
          lv[r][4] = rt_cuda::hq4::level_f32<0>(hi);
          lv[r][5] = rt_cuda::hq4::level_f32<1>(hi);
          lv[r][6] = rt_cuda::hq4::level_f32<2>(hi);
          lv[r][7] = rt_cuda::hq4::level_f32<3>(hi);
        }
#pragma unroll
        for (int j = 0; j < TB; ++j) {
          if (j < nt) {
            float xv[8];
            rt_cuda::load_x8(xr[j] + c + 8 * i, xv);
#pragma unroll
            for (int r = 0; r < R; ++r) {
              float d = 0.0f;
#pragma unroll
              for (int k = 0; k < 8; ++k) d = fmaf(lv[r][k], xv[k], d);
              acc[r][j] = fmaf(d, s[r][i], acc[r][j]);
            }
          }
        }
      }
    }

#pragma unroll
    for (int j = 0; j < TB; ++j) {
      if (j < nt) {
        float v[R];
#pragma unroll
        for (int r = 0; r < R; ++r) v[r] = rt_cuda::warp_sum(acc[r][j]);
        if (lane == 0) {
          const int yr = rt_cuda::out_row(a, e0 + j);
          if (sw) {
#pragma unroll
            for (int r = 0; r < R / 2; ++r) {
              if (ok[r]) a.y_swiglu[static_cast<size_t>(yr) * a.ld_swiglu + row[r]] = rt_cuda::swiglu_value(v[r], v[r + R / 2]);
            }
          } else {
#pragma unroll
            for (int r = 0; r < R; ++r) {
              if (ok[r]) {
                float * dst = a.y + static_cast<size_t>(yr) * a.ldy + row[r];
                *dst = a.accumulate ? *dst + v[r] : v[r];
              }
            }
          }
        }
      }
    }
  }
}

// TAIL: the kernel ends with the matmul tail (compiled apart: see matmul-f16-gemv.cu).
template <int R, int TB, bool TAIL>
__global__ void __launch_bounds__(THREADS) w4a16_gemv(rt_cuda_w4a16_args a) {
  rt_cuda::follow_prior_grids();
  extern __shared__ int tail_smem[];
  gemv_rows<R, TB>(a);
  // No argmax tail here (the dispatcher's rule), so no block's rows are named.
  if constexpr (TAIL) rt_cuda::finish_with_tail(a.tail, a.y, a.rows, a.ldy, tail_smem, 0, 0);
}

template <int R, int TB>
void launch(const rt_cuda_w4a16_args & a, int grid_rows, cudaStream_t stream) {
  const int unit_rows = a.y_swiglu != nullptr ? R / 2 : R;
  const int units = ((a.y_swiglu != nullptr ? a.rows / 2 : a.rows) + unit_rows - 1) / unit_rows;
  const dim3 grid((units + WARPS - 1) / WARPS, grid_rows);
  if (rt_cuda::tail_in_this_launch(a.tail)) {
    rt_cuda::launch("w4a16_gemv<R, TB, true>", w4a16_gemv<R, TB, true>, grid, THREADS,
                    rt_cuda_matmul_tail_smem(a.tail, a.rows, WARPS), stream, a);
  } else {
    rt_cuda::launch("w4a16_gemv<R, TB, false>", w4a16_gemv<R, TB, false>, grid, THREADS, 0, stream, a);
  }
}

}  // namespace

bool rt_cuda_w4a16_gemv_fits(const rt_cuda_w4a16_args & a) {
  return a.cols % LANE_COLS == 0 && a.group_size % 8 == 0 && a.ldx % 8 == 0 && (a.y_swiglu == nullptr || a.rows % 2 == 0);
}

void rt_cuda_w4a16_gemv(const rt_cuda_w4a16_args & a, cudaStream_t stream) {
  const int grid_rows = rt_cuda_w4a16_grid_rows(a);
  if (grid_rows <= 0) return;
  const int most = a.offsets == nullptr ? a.n_entries : (a.max_group_entries > 0 ? a.max_group_entries : RT_W4A16_TOKEN_TILE);
  if (most <= 1) {
    launch<8, 1>(a, grid_rows, stream);
  } else {
    launch<4, RT_W4A16_TOKEN_TILE>(a, grid_rows, stream);
  }
  RT_CUDA_LAUNCH_CHECK();
}
