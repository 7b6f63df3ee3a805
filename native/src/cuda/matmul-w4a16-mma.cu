// W4A16 grouped GEMM on tensor cores (sm_80+) for prefill and batched decode. A block is 4 warps over 128 output rows
// (64 gate + 64 up in SwiGLU mode) of one group and 16 * MT of its entries; each warp owns four 8-row tiles. Per
// 128-column slab a lane reads 16 bytes of codes of each of its tiles' rows, unpacks them in registers to exact FP16
// levels times the FP16 group scale (the weight rounded once to FP16) and feeds m16n8k16 MMAs with FP32 accumulation;
// activations come straight from global memory, 16 bytes a row per two k-steps (mma.cuh has the column order).
#include "cuda/common.cuh"
#include "cuda/hq4-unpack.cuh"
#include "cuda/matmul-w4a16.cuh"
#include "cuda/mma.cuh"
#include "cuda/w4a16-common.cuh"

namespace {

constexpr int WARPS = 4;
constexpr int THREADS = WARPS * 32;
constexpr int NT = 4;  // 8-row tiles a warp

__device__ __forceinline__ uint32_t bits(__half2 h) { return *reinterpret_cast<const uint32_t *>(&h); }

template <int MT>
__global__ void __launch_bounds__(THREADS) w4a16_mma(rt_cuda_w4a16_args a) {
  rt_cuda::follow_prior_grids();
  int begin = 0, end = 0;
  const int g = rt_cuda::w4a16_group(a, static_cast<int>(blockIdx.y), begin, end);
  if (g < 0) return;
  const uint8_t * qw = a.qweight[g];
  const __half * sc = a.scales[g];
  const int e0 = begin + static_cast<int>(blockIdx.z) * 16 * MT;
  if (qw == nullptr || e0 >= end) return;
  const int lane = threadIdx.x & 31;
  const int gq = lane >> 2, t = lane & 3;
  const bool sw = a.y_swiglu != nullptr;
  const int half_rows = a.rows / 2;
  // Tile nt's first row: plain, 32 consecutive rows a warp; SwiGLU, 16 gate rows and the 16 up rows that pair.
  const int base = (static_cast<int>(blockIdx.x) * WARPS + static_cast<int>(threadIdx.x >> 5)) * (sw ? 16 : 32);
  if (base >= (sw ? half_rows : a.rows)) return;
  int tile_row[NT];
  int limit[NT];  // rows at or past it are padding
#pragma unroll
  for (int nt = 0; nt < NT; ++nt) {
    tile_row[nt] = sw ? (nt < 2 ? base + 8 * nt : half_rows + base + 8 * (nt - 2)) : base + 8 * nt;
    limit[nt] = sw ? (nt < 2 ? half_rows : a.rows) : a.rows;
  }
  // This lane's activation rows: entries e0 + 16 mt + gq and + 8 (null past the group).
  const __half * xp[MT][2];
  rt_cuda::a_rows(a.x, a.ldx, a.rows_in, e0, end, xp);
  const int cols = a.cols;
  const int qstride = cols / 2;
  const int gpr = cols / a.group_size;
  const bool one_scale = a.group_size % 32 == 0;
  float acc[MT][NT][4];
  rt_cuda::zero_acc(acc);

  for (int c0 = 0; c0 < cols; c0 += rt_cuda::MMA_SLAB) {
    const int cl = c0 + 32 * t;
    uint4 q[NT];
    __half2 s[NT][4];
#pragma unroll
    for (int nt = 0; nt < NT; ++nt) {
      const int row = tile_row[nt] + gq;
      const bool ok = row < limit[nt];
      q[nt] = ok ? __ldg(reinterpret_cast<const uint4 *>(qw + static_cast<size_t>(row) * qstride + cl / 2))
                 : make_uint4(0, 0, 0, 0);
      rt_cuda::word_scales(sc + static_cast<size_t>(row) * gpr, cl, a.group_size, one_scale, ok, s[nt]);
    }
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      uint32_t ae[MT][4], ao[MT][4];
      rt_cuda::load_a_frags(xp, cl + 8 * i, ae, ao);
#pragma unroll
      for (int nt = 0; nt < NT; ++nt) {
        uint32_t lo, hi;
        rt_cuda::hq4::shifted_bytes(rt_cuda::word(q[nt], i), lo, hi);
        const uint32_t be[2] = {bits(__hmul2(rt_cuda::hq4::level_h2<0>(lo), s[nt][i])),
                                bits(__hmul2(rt_cuda::hq4::level_h2<1>(lo), s[nt][i]))};
        const uint32_t bo[2] = {bits(__hmul2(rt_cuda::hq4::level_h2<0>(hi), s[nt][i])),
                                bits(__hmul2(rt_cuda::hq4::level_h2<1>(hi), s[nt][i]))};
        rt_cuda::mma_two_steps(acc, nt, ae, ao, be, bo);
      }
    }
  }

#pragma unroll
  for (int mt = 0; mt < MT; ++mt) {
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      const int e = e0 + 16 * mt + gq + (i >= 2 ? 8 : 0);
      if (e >= end) continue;
      const int yr = rt_cuda::out_row(a, e);
#pragma unroll
      for (int nt = 0; nt < NT; ++nt) {
        const int row = tile_row[nt] + 2 * t + (i & 1);
        if (sw) {
          if (nt < 2 && row < half_rows) {
            a.y_swiglu[static_cast<size_t>(yr) * a.ld_swiglu + row] = rt_cuda::swiglu_value(acc[mt][nt][i], acc[mt][nt + 2][i]);
          }
        } else if (row < a.rows) {
          float * dst = a.y + static_cast<size_t>(yr) * a.ldy + row;
          *dst = a.accumulate ? *dst + acc[mt][nt][i] : acc[mt][nt][i];
        }
      }
    }
  }
}

template <int MT>
void launch(const rt_cuda_w4a16_args & a, int grid_rows, int most, cudaStream_t stream) {
  const int per_block = a.y_swiglu != nullptr ? 16 * WARPS : 32 * WARPS;
  const int rows = a.y_swiglu != nullptr ? a.rows / 2 : a.rows;
  const dim3 grid((rows + per_block - 1) / per_block, grid_rows, (most + 16 * MT - 1) / (16 * MT));
  rt_cuda::launch("w4a16_mma<MT>", w4a16_mma<MT>, grid, THREADS, 0, stream, a);
}

}  // namespace

bool rt_cuda_w4a16_mma_fits(const rt_cuda_w4a16_args & a) {
  return rt_cuda::mma_available() && a.cols % rt_cuda::MMA_SLAB == 0 && a.group_size % 8 == 0 && a.ldx % 8 == 0 &&
         (a.y_swiglu == nullptr || a.rows % 2 == 0);
}

void rt_cuda_w4a16_mma(const rt_cuda_w4a16_args & a, cudaStream_t stream) {
  const int grid_rows = rt_cuda_w4a16_grid_rows(a);
  const int most = a.offsets == nullptr ? a.n_entries : (a.max_group_entries > 0 ? a.max_group_entries : a.n_entries);
  if (grid_rows <= 0 || most <= 0) return;
  // Tiles sized to a group's average entries; a group over the tile takes further blocks (grid z). No 64-entry
  // tile: its accumulators and fragments need more than 255 registers (ptxas spills them).
  if (rt_cuda_w4a16_mean_entries(a) <= 16) {
    launch<1>(a, grid_rows, most, stream);
  } else {
    launch<2>(a, grid_rows, most, stream);
  }
  RT_CUDA_LAUNCH_CHECK();
}
