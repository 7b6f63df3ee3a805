// Dense FP16 matmul on tensor cores (sm_80+) for the non-routed weights at prefill and batched decode. A block is 4
// warps over 128 output rows and 16 * MT tokens; each warp owns four 8-row tiles. Per 128-column slab a lane reads
// 64 contiguous bytes of each of its tiles' rows, 16 bytes a row per two k-steps, and the activations straight from
// global memory (mma.cuh has the column order); m16n8k16 MMAs accumulate in FP32.
#include "cuda/common.cuh"
#include "cuda/matmul-f16.cuh"
#include "cuda/mma.cuh"

namespace {

constexpr int WARPS = 4;
constexpr int THREADS = WARPS * 32;
constexpr int NT = 4;

template <int MT>
__global__ void __launch_bounds__(THREADS) f16_mma(rt_cuda_f16_args a) {
  rt_cuda::follow_prior_grids();
  const int t0 = static_cast<int>(blockIdx.y) * 16 * MT;
  const int lane = threadIdx.x & 31;
  const int gq = lane >> 2, t = lane & 3;
  const int base = (static_cast<int>(blockIdx.x) * WARPS + static_cast<int>(threadIdx.x >> 5)) * 8 * NT;
  if (base >= a.rows) return;
  const __half * xp[MT][2];
  rt_cuda::a_rows(a.x, a.ldx, a.rows_in, t0, a.n, xp);
  const __half * wp[NT];
#pragma unroll
  for (int nt = 0; nt < NT; ++nt) {
    const int row = base + 8 * nt + gq;
    wp[nt] = row < a.rows ? a.w + static_cast<size_t>(row) * a.cols : nullptr;
  }
  float acc[MT][NT][4];
  rt_cuda::zero_acc(acc);

  const uint4 z = make_uint4(0, 0, 0, 0);
  for (int c0 = 0; c0 < a.cols; c0 += rt_cuda::MMA_SLAB) {
    const int cl = c0 + 32 * t;
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      uint4 w[NT];
#pragma unroll
      for (int nt = 0; nt < NT; ++nt) w[nt] = wp[nt] != nullptr ? __ldg(reinterpret_cast<const uint4 *>(wp[nt] + cl + 8 * i)) : z;
      uint32_t ae[MT][4], ao[MT][4];
      rt_cuda::load_a_frags(xp, cl + 8 * i, ae, ao);
#pragma unroll
      for (int nt = 0; nt < NT; ++nt) {
        const uint32_t be[2] = {w[nt].x, w[nt].y};
        const uint32_t bo[2] = {w[nt].z, w[nt].w};
        rt_cuda::mma_two_steps(acc, nt, ae, ao, be, bo);
      }
    }
  }

#pragma unroll
  for (int mt = 0; mt < MT; ++mt) {
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      const int e = t0 + 16 * mt + gq + (i >= 2 ? 8 : 0);
      if (e >= a.n) continue;
      const int yr = a.rows_out != nullptr ? a.rows_out[e] : e;
#pragma unroll
      for (int nt = 0; nt < NT; ++nt) {
        const int row = base + 8 * nt + 2 * t + (i & 1);
        if (row < a.rows) {
          float * dst = a.y + static_cast<size_t>(yr) * a.ldy + row;
          *dst = a.accumulate ? *dst + acc[mt][nt][i] : acc[mt][nt][i];
        }
      }
    }
  }
}

template <int MT>
void launch(const rt_cuda_f16_args & a, cudaStream_t stream) {
  const int per_block = 8 * NT * WARPS;
  const dim3 grid((a.rows + per_block - 1) / per_block, (a.n + 16 * MT - 1) / (16 * MT));
  rt_cuda::launch("f16_mma<MT>", f16_mma<MT>, grid, THREADS, 0, stream, a);
}

}  // namespace

bool rt_cuda_f16_mma_fits(const rt_cuda_f16_args & a) {
  return rt_cuda::mma_available() && a.cols % rt_cuda::MMA_SLAB == 0 && a.ldx % 8 == 0;
}

void rt_cuda_f16_mma(const rt_cuda_f16_args & a, cudaStream_t stream) {
  if (a.n <= 16) {
    launch<1>(a, stream);
  } else if (a.n <= 32) {
    launch<2>(a, stream);
  } else {
    launch<4>(a, stream);
  }
  RT_CUDA_LAUNCH_CHECK();
}
