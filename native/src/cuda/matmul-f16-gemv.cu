// Dense FP16 GEMV for decode (1-3 tokens): a lane reads 16 bytes of each of R rows per step, two steps' loads issued
// before either is used, and the activations straight from global memory (L1 serves the other warps); FP32 sums.
// At batch 1 these weights (attention, router, LM head) are most of the bytes a token reads. Two divisions of the
// work: by rows (each warp R whole rows; no shared memory, no barrier), or, where that leaves SMs without a block
// (the router's 64 rows, the output projection's 2,048), by columns too: a block's warps split R rows' columns and
// add their sums in shared memory in warp order. The division depends on the row count alone and a row's sum runs
// in the same order for any R and token count, so a token's result does not depend on the batch it is in.
#include <algorithm>
#include <cstdint>

#include "cuda/common.cuh"
#include "cuda/matmul-f16.cuh"
#include "cuda/matmul-tail-block.cuh"

namespace {

constexpr int WARPS = 4;
constexpr int THREADS = WARPS * 32;
constexpr int STEP_COLS = 32 * 8;

// acc[r][j] += this lane's share of row r times token j's activations: columns c_begin, c_begin + c_step, ... in
// runs of 8.
template <int R, int TB>
__device__ __forceinline__ void lane_dots(const rt_cuda_f16_args & a, const __half * const (&wr)[R],
                                          const __half * const (&xr)[TB], int nt, int c_begin, int c_step,
                                          float (&acc)[R][TB]) {
#pragma unroll
  for (int r = 0; r < R; ++r)
#pragma unroll
    for (int j = 0; j < TB; ++j) acc[r][j] = 0.0f;
  for (int c0 = c_begin; c0 < a.cols; c0 += 2 * c_step) {
    uint4 w[2][R];
    const uint4 z = make_uint4(0, 0, 0, 0);
#pragma unroll
    for (int u = 0; u < 2; ++u) {
      const int c = c0 + u * c_step;
#pragma unroll
      for (int r = 0; r < R; ++r) w[u][r] = wr[r] != nullptr && c < a.cols ? __ldg(reinterpret_cast<const uint4 *>(wr[r] + c)) : z;
    }
#pragma unroll
    for (int u = 0; u < 2; ++u) {
      const int c = c0 + u * c_step;
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
}

template <int R>
__device__ __forceinline__ void row_pointers(const rt_cuda_f16_args & a, int row0, const __half * (&wr)[R]) {
#pragma unroll
  for (int r = 0; r < R; ++r) wr[r] = row0 + r < a.rows ? a.w + static_cast<size_t>(row0 + r) * a.cols : nullptr;
}

// Before the wait for the previous kernel (launch.cuh): this thread's share of the first `lines` 128-byte lines of
// rows wr into L2, lines first, first + step, ...; weights are the one input no kernel writes.
template <int R>
__device__ __forceinline__ void prefetch_rows(const __half * const (&wr)[R], int lines, int first, int step) {
#pragma unroll
  for (int r = 0; r < R; ++r) {
    if (wr[r] == nullptr) continue;
    for (int l = first; l < lines; l += step) rt_cuda::prefetch_l2(reinterpret_cast<const char *>(wr[r]) + 128 * l);
  }
}

template <int TB>
__device__ __forceinline__ int token_pointers(const rt_cuda_f16_args & a, int t0, const __half * (&xr)[TB]) {
  const int nt = min(TB, a.n - t0);
#pragma unroll
  for (int j = 0; j < TB; ++j) {
    const int e = t0 + j;
    xr[j] = j < nt ? a.x + static_cast<size_t>(a.rows_in != nullptr ? a.rows_in[e] : e) * a.ldx : nullptr;
  }
  return nt;
}

// Rows split over warps: warp w of block b owns rows (4b + w) R ... (The two divisions set up their tiles
// alike, but written apart: sharing the loop through a lambda made ptxas spill in the one-row division.)
template <int R, int TB>
__device__ __forceinline__ void rows_by_warp(const rt_cuda_f16_args & a, int prefetch_lines) {
  const int row0 = (static_cast<int>(blockIdx.x) * WARPS + static_cast<int>(threadIdx.x >> 5)) * R;
  const __half * wr[R];
  row_pointers<R>(a, row0, wr);
  prefetch_rows<R>(wr, prefetch_lines, threadIdx.x & 31, 32);
  rt_cuda::follow_prior_grids();
  if (row0 >= a.rows) return;
  for (int t0 = 0; t0 < a.n; t0 += TB) {
    const __half * xr[TB];
    const int nt = token_pointers<TB>(a, t0, xr);
    float acc[R][TB];
    lane_dots<R, TB>(a, wr, xr, nt, (threadIdx.x & 31) * 8, STEP_COLS, acc);
    rt_cuda::store_warp_rows<R, TB>(acc, nt, row0, a.rows, t0, a.rows_out, a.y, a.ldy, a.accumulate);
  }
}

// Columns split over the block's warps: block b owns rows bR ..; warp w takes columns 8 (32 w + lane) + 1024 i.
template <int R, int TB>
__device__ __forceinline__ void rows_by_block(const rt_cuda_f16_args & a, int prefetch_lines) {
  __shared__ float partial[WARPS][R * TB];
  const int warp = static_cast<int>(threadIdx.x >> 5);
  const int lane = threadIdx.x & 31;
  const int row0 = static_cast<int>(blockIdx.x) * R;
  const __half * wr[R];
  row_pointers<R>(a, row0, wr);
  prefetch_rows<R>(wr, prefetch_lines, static_cast<int>(threadIdx.x), THREADS);
  rt_cuda::follow_prior_grids();
  for (int t0 = 0; t0 < a.n; t0 += TB) {
    const __half * xr[TB];
    const int nt = token_pointers<TB>(a, t0, xr);
    float acc[R][TB];
    lane_dots<R, TB>(a, wr, xr, nt, (warp * 32 + lane) * 8, WARPS * STEP_COLS, acc);
#pragma unroll
    for (int r = 0; r < R; ++r) {
#pragma unroll
      for (int j = 0; j < TB; ++j) {
        const float v = rt_cuda::warp_sum(acc[r][j]);
        if (lane == 0) partial[warp][r * TB + j] = v;
      }
    }
    __syncthreads();
    for (int i = static_cast<int>(threadIdx.x); i < R * TB; i += THREADS) {
      const int r = i / TB, j = i % TB;
      if (row0 + r < a.rows && j < nt) {
        float v = 0.0f;
#pragma unroll
        for (int w = 0; w < WARPS; ++w) v += partial[w][i];
        const int yr = a.rows_out != nullptr ? a.rows_out[t0 + j] : t0 + j;
        float * dst = a.y + static_cast<size_t>(yr) * a.ldy + row0 + r;
        *dst = a.accumulate ? *dst + v : v;
      }
    }
    __syncthreads();
  }
}

// TAIL: the kernel ends with the matmul tail. Compiled apart, since the tails' code would otherwise set the register
// count of every launch (decode GEMVs keep more loads in flight with fewer registers).
template <int R, int TB, bool TAIL>
__global__ void __launch_bounds__(THREADS) f16_gemv(rt_cuda_f16_args a, int prefetch_lines) {
  extern __shared__ int tail_smem[];
  rows_by_warp<R, TB>(a, prefetch_lines);
  if constexpr (TAIL) {
    const int row0 = static_cast<int>(blockIdx.x) * WARPS * R;
    rt_cuda::finish_with_tail(a.tail, a.y, a.rows, a.ldy, tail_smem, row0, WARPS * R);
  }
}

template <int R, int TB, bool TAIL>
__global__ void __launch_bounds__(THREADS) f16_gemv_split(rt_cuda_f16_args a, int prefetch_lines) {
  extern __shared__ int tail_smem[];
  rows_by_block<R, TB>(a, prefetch_lines);
  if constexpr (TAIL) {
    rt_cuda::finish_with_tail(a.tail, a.y, a.rows, a.ldy, tail_smem, static_cast<int>(blockIdx.x) * R, R);
  }
}

// Lines of each weight row a kernel brings into L2 before its wait: none without a programmatic launch (the kernel
// before it has finished: nothing to overlap), and at most half the L2 over the whole matrix (the LM head is four
// times an H200's L2; lines fetched past it would evict those fetched first).
int prefetch_lines(const rt_cuda_f16_args & a) {
  if (!rt_cuda::programmatic_launch_on() || a.rows <= 0) return 0;
  const int64_t row_lines = (static_cast<int64_t>(a.cols) * static_cast<int64_t>(sizeof(__half)) + 127) / 128;
  const int64_t budget_lines = static_cast<int64_t>(rt_cuda::l2_bytes()) / 2 / 128;
  return static_cast<int>(std::min(row_lines, budget_lines / a.rows));
}

template <int R, int TB>
void launch(const rt_cuda_f16_args & a, cudaStream_t stream) {
  const int grid = (a.rows + R * WARPS - 1) / (R * WARPS);
  if (rt_cuda::tail_in_this_launch(a.tail)) {
    rt_cuda::launch("f16_gemv<R, TB, true>", f16_gemv<R, TB, true>, grid, THREADS,
                    rt_cuda_matmul_tail_smem(a.tail, a.rows, WARPS), stream, a, prefetch_lines(a));
  } else {
    rt_cuda::launch("f16_gemv<R, TB, false>", f16_gemv<R, TB, false>, grid, THREADS, 0, stream, a,
                    prefetch_lines(a));
  }
}

template <int R, int TB>
void launch_split(const rt_cuda_f16_args & a, cudaStream_t stream) {
  const int grid = (a.rows + R - 1) / R;
  if (rt_cuda::tail_in_this_launch(a.tail)) {
    rt_cuda::launch("f16_gemv_split<R, TB, true>", f16_gemv_split<R, TB, true>, grid, THREADS,
                    rt_cuda_matmul_tail_smem(a.tail, a.rows, WARPS), stream, a, prefetch_lines(a));
  } else {
    rt_cuda::launch("f16_gemv_split<R, TB, false>", f16_gemv_split<R, TB, false>, grid, THREADS, 0, stream, a,
                    prefetch_lines(a));
  }
}

// Blocks that keep every SM busy: below this, the columns split too.
int wanted_blocks(int per_sm) { return (per_sm > 0 ? per_sm : RT_F16_GEMV_BLOCKS_PER_SM) * rt_cuda::sm_count(); }

}  // namespace

bool rt_cuda_f16_gemv_fits(const rt_cuda_f16_args & a) { return a.cols % 8 == 0 && a.ldx % 8 == 0; }

bool rt_cuda_f16_gemv_splits_columns(int rows, int blocks_per_sm) {
  return (rows + 8 * WARPS - 1) / (8 * WARPS) < wanted_blocks(blocks_per_sm);
}

void rt_cuda_f16_gemv(const rt_cuda_f16_args & a, cudaStream_t stream) {
  if (a.n == 1) {
    launch<8, 1>(a, stream);
  } else {
    launch<4, 4>(a, stream);
  }
  RT_CUDA_LAUNCH_CHECK();
}

void rt_cuda_f16_gemv_split(const rt_cuda_f16_args & a, cudaStream_t stream) {
  // The most rows a block that still leaves every SM a block; one row a block below that.
  const int want = wanted_blocks(a.gemv_blocks_per_sm);
  const int r = a.rows >= 8 * want ? 8 : a.rows >= 4 * want ? 4 : a.rows >= 2 * want ? 2 : 1;
  if (a.n == 1) {
    switch (r) {
      case 8: launch_split<8, 1>(a, stream); break;
      case 4: launch_split<4, 1>(a, stream); break;
      case 2: launch_split<2, 1>(a, stream); break;
      default: launch_split<1, 1>(a, stream); break;
    }
  } else {
    switch (r) {
      case 8:
      case 4: launch_split<4, 4>(a, stream); break;
      case 2: launch_split<2, 4>(a, stream); break;
      default: launch_split<1, 4>(a, stream); break;
    }
  }
  RT_CUDA_LAUNCH_CHECK();
}
