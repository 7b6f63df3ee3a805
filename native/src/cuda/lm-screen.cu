// The LM head's INT8 screen (lm-screen.cuh). The bounds are rigorous in float: every step that could round the wrong
// way rounds outward (__fmul_ru, __fadd_rd, ...), so no float arithmetic of the bound narrows it.
#include "cuda/lm-screen.cuh"

#include <algorithm>
#include <cmath>

#include "core/thread-pool.h"
#include "cpu/lm-head-screen.h"
#include "cuda/argmax-block.cuh"
#include "cuda/common.cuh"

namespace {

constexpr int WARPS = 8;
constexpr int THREADS = WARPS * 32;
constexpr int ROWS = 2;        // rows a warp screens at once
constexpr int UNROLL = 4;      // 16-byte steps of a row whose loads are in flight together (2,048 columns: all)
constexpr int PICK_ROWS = THREADS;  // rows of the pick a block scans (one a thread, a warp's 32 at a time)

// What each block of the bounds launch derives from a token's activations (the same in every block).
struct token_screen {
  float sx;      // the activations' INT8 scale
  float dx;      // max |x - sx k| over the columns, rounded up
  float l1x;     // sum |x|, rounded up
  float gl1x;    // gamma * l1x, rounded up
  int screened;  // 0: every row's hi is +inf (the full product)
};

__device__ __forceinline__ float warp_sum_ru(float v) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v = __fadd_ru(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}

__device__ __forceinline__ int warp_isum(int v) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}

__device__ __forceinline__ unsigned ordered_bits(float f) {
  const unsigned b = static_cast<unsigned>(__float_as_int(f));
  return (b & 0x80000000u) != 0 ? ~b : b | 0x80000000u;
}

// Token t's INT8 activations into xq (cols bytes) and its screen figures; every thread of the block calls it.
__device__ void prepare_token(const __half * x, int cols, float max_abs_all, float gamma, int8_t * xq,
                              token_screen & ts) {
  __shared__ float scratch[32];
  __shared__ float sum_parts[WARPS];
  // A value that is not finite makes the largest one +inf, which leaves the token unscreened.
  float m = 0.0f, l1 = 0.0f;
  for (int i = static_cast<int>(threadIdx.x); i < cols; i += THREADS) {
    const float v = __half2float(x[i]);
    m = fmaxf(m, isfinite(v) ? fabsf(v) : INFINITY);
    l1 = __fadd_ru(l1, fabsf(v));
  }
  l1 = warp_sum_ru(l1);
  if ((threadIdx.x & 31) == 0) sum_parts[threadIdx.x >> 5] = l1;
  m = rt_cuda::block_max(m, scratch);  // its barriers also publish sum_parts
  l1 = 0.0f;
#pragma unroll
  for (int w = 0; w < WARPS; ++w) l1 = __fadd_ru(l1, sum_parts[w]);
  // Any scale and codes are valid: the bound takes the error they actually make.
  const float sx = m / 127.0f;
  float d = 0.0f;
  for (int i = static_cast<int>(threadIdx.x); i < cols; i += THREADS) {
    const float v = __half2float(x[i]);
    const float k = sx > 0.0f ? fminf(fmaxf(rintf(v / sx), -127.0f), 127.0f) : 0.0f;
    xq[i] = static_cast<int8_t>(static_cast<int>(k));
    d = fmaxf(d, fmaxf(fabsf(__fmaf_ru(-sx, k, v)), fabsf(__fmaf_rd(-sx, k, v))));
  }
  d = rt_cuda::block_max(d, scratch);
  ts.sx = sx;
  ts.dx = d;
  ts.l1x = l1;
  ts.gl1x = __fmul_ru(gamma, l1);
  // No partial sum of a row's product can reach float's range below this (the CPU screen's test).
  ts.screened = isfinite(m) && __fmul_ru(__fmul_ru(l1, max_abs_all), 1.0f + 2.0f * gamma) < 1e37f;
}

// [lo, hi] around the GEMV's logit of a row whose INT8 dot with the token's codes is `dot`.
__device__ __forceinline__ void row_bounds(int dot, const float4 & m, const token_screen & ts, float & lo, float & hi) {
  const float p_hi = __fmul_ru(m.x, ts.sx), p_lo = __fmul_rd(m.x, ts.sx);
  const float d_hi = __int2float_ru(dot), d_lo = __int2float_rd(dot);
  const float a_hi = dot >= 0 ? __fmul_ru(p_hi, d_hi) : __fmul_ru(p_lo, d_hi);
  const float a_lo = dot >= 0 ? __fmul_rd(p_lo, d_lo) : __fmul_rd(p_hi, d_lo);
  // |x.(w - scale q)| + |(x - sx k).(scale q)| + the GEMV's own rounding.
  const float b = __fadd_ru(__fadd_ru(__fmul_ru(ts.l1x, m.y), __fmul_ru(__fmul_ru(ts.dx, m.x), m.w)),
                            __fmul_ru(ts.gl1x, m.z));
  hi = __fadd_ru(a_hi, b);
  lo = __fadd_rd(a_lo, -b);
}

template <int TB>
__global__ void __launch_bounds__(THREADS) lm_screen_bounds(rt_cuda_lm_screen_args a) {
  extern __shared__ int8_t xq[];  // [n][cols]
  __shared__ token_screen ts[RT_LM_SCREEN_MAX_TOKENS];
  __shared__ float lo_parts[WARPS][RT_LM_SCREEN_MAX_TOKENS];
  const int warp = static_cast<int>(threadIdx.x >> 5), lane = static_cast<int>(threadIdx.x & 31);
  const int stride = static_cast<int>(gridDim.x) * WARPS * ROWS;
  const int first = (static_cast<int>(blockIdx.x) * WARPS + warp) * ROWS;
  // The codes are the one input no kernel writes: the first rows' lines on their way before the wait.
  for (int r = 0; r < ROWS; ++r) {
    if (first + r >= a.rows) break;
    for (int c = lane * 128; c < a.cols; c += 32 * 128) {
      rt_cuda::prefetch_l2(a.q + static_cast<size_t>(first + r) * a.cols + c);
    }
  }
  rt_cuda::follow_prior_grids();
  for (int t = 0; t < a.n; ++t) {
    const int xr = a.rows_in != nullptr ? a.rows_in[t] : t;
    token_screen s;
    prepare_token(a.x + static_cast<size_t>(xr) * a.ldx, a.cols, a.max_abs_all, a.gamma, xq + t * a.cols, s);
    if (threadIdx.x == 0) ts[t] = s;
  }
  __syncthreads();
  float lo_best = -INFINITY;  // lane t: token t's largest lo over this warp's rows
  for (int row0 = first; row0 < a.rows; row0 += stride) {
    int acc[ROWS][TB];
#pragma unroll
    for (int r = 0; r < ROWS; ++r)
#pragma unroll
      for (int t = 0; t < TB; ++t) acc[r][t] = 0;
    const int8_t * wr[ROWS];
#pragma unroll
    for (int r = 0; r < ROWS; ++r) wr[r] = row0 + r < a.rows ? a.q + static_cast<size_t>(row0 + r) * a.cols : nullptr;
    for (int c0 = lane * 16; c0 < a.cols; c0 += UNROLL * 512) {
      uint4 w[UNROLL][ROWS];
      const uint4 z = make_uint4(0, 0, 0, 0);
#pragma unroll
      for (int u = 0; u < UNROLL; ++u) {
        const int c = c0 + u * 512;
#pragma unroll
        for (int r = 0; r < ROWS; ++r) {
          w[u][r] = wr[r] != nullptr && c < a.cols ? __ldg(reinterpret_cast<const uint4 *>(wr[r] + c)) : z;
        }
      }
#pragma unroll
      for (int u = 0; u < UNROLL; ++u) {
        const int c = c0 + u * 512;
        if (c >= a.cols) break;
#pragma unroll
        for (int t = 0; t < TB; ++t) {
          if (t < a.n) {
            const uint4 xv = *reinterpret_cast<const uint4 *>(xq + t * a.cols + c);
#pragma unroll
            for (int r = 0; r < ROWS; ++r) {
              int s = acc[r][t];
              s = __dp4a(static_cast<int>(w[u][r].x), static_cast<int>(xv.x), s);
              s = __dp4a(static_cast<int>(w[u][r].y), static_cast<int>(xv.y), s);
              s = __dp4a(static_cast<int>(w[u][r].z), static_cast<int>(xv.z), s);
              s = __dp4a(static_cast<int>(w[u][r].w), static_cast<int>(xv.w), s);
              acc[r][t] = s;
            }
          }
        }
      }
    }
#pragma unroll
    for (int r = 0; r < ROWS; ++r) {
      const int row = row0 + r;
      const float4 m = row < a.rows ? __ldg(a.meta + row) : make_float4(0, 0, 0, 0);
#pragma unroll
      for (int t = 0; t < TB; ++t) {
        if (t < a.n) {
          const int dot = warp_isum(acc[r][t]);
          if (lane == t && row < a.rows) {
            float lo = -INFINITY, hi = INFINITY;
            if (ts[t].screened) row_bounds(dot, m, ts[t], lo, hi);
            a.hi[static_cast<size_t>(t) * a.rows + row] = hi;
            lo_best = fmaxf(lo_best, lo);
          }
        }
      }
    }
  }
  if (lane < a.n) lo_parts[warp][lane] = lo_best;
  __syncthreads();
  if (static_cast<int>(threadIdx.x) < a.n) {
    const int t = static_cast<int>(threadIdx.x);
    float lo = -INFINITY;
#pragma unroll
    for (int w = 0; w < WARPS; ++w) lo = fmaxf(lo, lo_parts[w][t]);
    if (lo > -INFINITY) atomicMax(a.floor + t, ordered_bits(lo));
  }
}

// Row `row`'s logit exactly as the decode GEMV's whole-row warps compute it (matmul-f16-gemv.cu, lane_dots and
// store_warp_rows): lane l takes columns 8l + 256i in runs of 8, FP32 fmaf in column order, then the warp's xor sum,
// whose lane 0 value the GEMV stores. Every lane returns that value.
__device__ __forceinline__ float gemv_row_logit(const __half * w, const __half * x, int cols) {
  const int lane = static_cast<int>(threadIdx.x & 31);
  float acc = 0.0f;
  for (int c = lane * 8; c < cols; c += 256) {
    const uint4 raw = __ldg(reinterpret_cast<const uint4 *>(w + c));
    float xv[8];
    rt_cuda::load_x8(x + c, xv);
    const __half2 * wh = reinterpret_cast<const __half2 *>(&raw);
#pragma unroll
    for (int k = 0; k < 4; ++k) {
      const float2 f = __half22float2(wh[k]);
      acc = fmaf(f.x, xv[2 * k], acc);
      acc = fmaf(f.y, xv[2 * k + 1], acc);
    }
  }
  return __shfl_sync(0xffffffffu, rt_cuda::warp_sum(acc), 0);
}

__global__ void __launch_bounds__(THREADS) lm_screen_pick(rt_cuda_lm_screen_args a) {
  const int warp = static_cast<int>(threadIdx.x >> 5), lane = static_cast<int>(threadIdx.x & 31);
  const int base = static_cast<int>(blockIdx.x) * PICK_ROWS + warp * 32;
  rt_cuda::follow_prior_grids();
  unsigned computed = 0;
  for (int t = 0; t < a.n; ++t) {
    const float floor = rt_lm_screen_floor_value(__ldcg(a.floor + t));
    const __half * x = a.x + static_cast<size_t>(a.rows_in != nullptr ? a.rows_in[t] : t) * a.ldx;
    const int row = base + lane;
    const bool candidate = row < a.rows && __ldcg(a.hi + static_cast<size_t>(t) * a.rows + row) >= floor;
    unsigned mask = __ballot_sync(0xffffffffu, candidate);
    computed += static_cast<unsigned>(__popc(mask));
    float bv = -INFINITY;
    int bi = a.rows;
    int nan = 0;
    while (mask != 0) {
      const int r = base + __ffs(static_cast<int>(mask)) - 1;
      mask &= mask - 1;
      rt_cuda::argmax_take(gemv_row_logit(a.w + static_cast<size_t>(r) * a.cols, x, a.cols), r, bv, bi, nan);
    }
    rt_cuda::block_argmax(bv, bi, nan, a.rows);
    if (threadIdx.x == 0) {
      a.partials[static_cast<size_t>(t) * a.partials_per_token + blockIdx.x] =
          make_int2(__float_as_int(bv), nan ? -1 : bi);
    }
  }
  if (a.stats != nullptr && lane == 0 && computed != 0) {
    atomicAdd(a.stats + 1, static_cast<unsigned long long>(computed));
  }
  if (!rt_cuda::last_block_arrived(a.arrivals, gridDim.x)) return;
  for (int t = 0; t < a.n; ++t) {
    rt_cuda::argmax_of_partials(a.partials + static_cast<size_t>(t) * a.partials_per_token, static_cast<int>(gridDim.x),
                                a.rows, a.out + t);
  }
  if (static_cast<int>(threadIdx.x) < a.n) a.floor[threadIdx.x] = 0;
  if (a.stats != nullptr && threadIdx.x == 0) atomicAdd(a.stats, static_cast<unsigned long long>(a.n));
}

}  // namespace

bool rt_cuda_lm_screen_fits(int cols, int n) {
  return n >= 1 && n <= RT_LM_SCREEN_MAX_TOKENS && cols > 0 && cols % 16 == 0 &&
         static_cast<size_t>(n) * cols <= 32 * 1024;
}

int rt_cuda_lm_screen_pick_blocks(int rows) { return (rows + PICK_ROWS - 1) / PICK_ROWS; }

void rt_cuda_lm_screen_bounds(const rt_cuda_lm_screen_args & a, cudaStream_t stream) {
  const int want = (a.rows + WARPS * ROWS - 1) / (WARPS * ROWS);
  // As many blocks as are resident at once (about 55-72 registers a thread: 4 blocks of 256 an SM), each striding
  // over the rows: a second wave would pay each block's preparation of the tokens again.
  const int grid = std::max(1, std::min(want, 4 * rt_cuda::sm_count()));
  const size_t smem = static_cast<size_t>(a.n) * a.cols;
  if (a.n == 1) {
    rt_cuda::launch("lm_screen_bounds<1>", lm_screen_bounds<1>, grid, THREADS, smem, stream, a);
  } else {
    rt_cuda::launch("lm_screen_bounds<RT_LM_SCREEN_MAX_TOKENS>", lm_screen_bounds<RT_LM_SCREEN_MAX_TOKENS>, grid,
                    THREADS, smem, stream, a);
  }
  RT_CUDA_LAUNCH_CHECK();
}

void rt_cuda_lm_screen_pick(const rt_cuda_lm_screen_args & a, cudaStream_t stream) {
  rt_cuda::launch("lm_screen_pick", lm_screen_pick, rt_cuda_lm_screen_pick_blocks(a.rows), THREADS, 0, stream, a);
  RT_CUDA_LAUNCH_CHECK();
}

void rt_cuda_lm_screen(const rt_cuda_lm_screen_args & a, cudaStream_t stream) {
  rt_cuda_lm_screen_bounds(a, stream);
  rt_cuda_lm_screen_pick(a, stream);
}

rt_lm_screen_copy rt_lm_screen_build(const uint16_t * f16, int rows, int cols) {
  rt::tensor_view view;
  view.name = "lm_head";
  view.type = rt::dtype::f16;
  view.shape = {rows, cols};
  view.data = f16;
  view.nbytes = static_cast<size_t>(rows) * cols * 2;
  rt::lm_head_screen s;
  {
    rt::thread_pool pool(0);
    rt::lm_head_screen_build(view, pool, s);
  }
  rt_lm_screen_copy c;
  c.ok = s.ok;
  if (!s.ok) return c;
  c.q = std::move(s.q);
  c.meta.resize(static_cast<size_t>(rows));
  for (size_t r = 0; r < c.meta.size(); ++r) {
    c.meta[r] = make_float4(s.scale[r], s.err[r], s.max_abs[r], static_cast<float>(s.l1[r]));  // sum |q| < 2^24
  }
  c.max_abs_all = s.max_abs_all;
  // The CPU screen's gamma as a float no smaller.
  const double g = rt::lm_head_screen_gamma(cols);
  c.gamma = static_cast<double>(static_cast<float>(g)) >= g ? static_cast<float>(g)
                                                            : std::nextafter(static_cast<float>(g), 1.0f);
  return c;
}

rt_cuda_lm_screen_args rt_cuda_lm_screen_head(const rt_lm_screen_copy & copy, const int8_t * q, const float4 * meta,
                                              const __half * w, int rows, int cols) {
  rt_cuda_lm_screen_args a;
  a.q = q;
  a.meta = meta;
  a.max_abs_all = copy.max_abs_all;
  a.gamma = copy.gamma;
  a.w = w;
  a.rows = rows;
  a.cols = cols;
  a.partials_per_token = rt_cuda_lm_screen_pick_blocks(rows);
  return a;
}
