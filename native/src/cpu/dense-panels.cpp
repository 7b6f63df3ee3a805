#include "cpu/dense-panels.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

#include "cpu/cpu-kernels.h"
#include "cpu/q4-q8-dot.h"
#include "cpu/simd-lanes.h"
#include "quant/qpacked.h"

namespace rt {

namespace {

using lanes::bf16_lanes;
using lanes::f16_lanes;
using lanes::f32_lanes;

// Where a call's panels and tokens are: `xt` holds each group of tokens column by column (xt[k * xs + j]).
struct panel_call {
  int64_t cols = 0;
  int64_t pstride = 0;   // elements from one panel to the next (cols * 16)
  const float * xt = nullptr;
  int xs = 0;            // tokens of the group (the stride of xt)
  float * y = nullptr;   // the first panel's row 0, token 0
  int64_t ldy = 0;
  int64_t rows_left = 0; // rows of the matrix from the first panel's row 0
};

// a * b + c rounded once, without the C library's fmaf (MinGW's rounds twice). The product is exact in double; the
// sum's rounding error e comes from TwoSum, and decides the one case where rounding the double sum to float could go
// the wrong way: the sum landing exactly halfway between two floats while the exact value is not.
float fma_rn(float a, float b, float c) {
  const double p = static_cast<double>(a) * static_cast<double>(b);
  const double s = p + static_cast<double>(c);
  const float r = static_cast<float>(s);
  if (!std::isfinite(s) || !std::isfinite(r) || static_cast<double>(r) == s) return r;
  const double bp = s - p;
  const double e = (p - (s - bp)) + (static_cast<double>(c) - bp);
  if (e == 0) return r;
  const float other = std::nextafter(r, static_cast<double>(r) < s ? std::numeric_limits<float>::infinity()
                                                                      : -std::numeric_limits<float>::infinity());
  if ((static_cast<double>(r) + static_cast<double>(other)) * 0.5 != s) return r;
  // Halfway: the exact value lies on e's side of s.
  return (e > 0) == (other > r) ? other : r;
}

// Stores 16 lanes (or the rows that exist) of one panel's result for one token.
inline void store_rows(float * dst, const float * v, int64_t rows_left) {
  const int n = static_cast<int>(std::min<int64_t>(kPanelRows, rows_left));
  if (n > 0) std::memcpy(dst, v, sizeof(float) * static_cast<size_t>(n));
}

// The chain order in plain code: w[k * ws] against x[k * xs] for k < n (the reference, and the scalar path).
template <class L>
float chain_reference(const typename L::elem * w, int64_t ws, const float * x, int64_t xs, int64_t n) {
  float a = 0.0f;
  for (int64_t k = 0; k < n; ++k) a = fma_rn(L::one(w[k * ws]), x[k * xs], a);
  return a;
}

// One panel against nt tokens on the scalar path.
template <class L>
void scalar_panel(const typename L::elem * p, const panel_call & c, int nt) {
  for (int j = 0; j < nt; ++j) {
    float acc[kPanelRows];
    for (int l = 0; l < kPanelRows; ++l) acc[l] = chain_reference<L>(p + l, kPanelRows, c.xt + j, c.xs, c.cols);
    store_rows(c.y + j * c.ldy, acc, c.rows_left);
  }
}

#ifdef RT_HAVE_AVX512
// NP panels against NT tokens: NP * NT accumulators of 16 rows, each weight vector loaded and widened once for NT
// FMAs, each activation broadcast once for NP.
template <class L, int NP, int NT>
RT_AVX512 void avx512_panels(const typename L::elem * p, const panel_call & c) {
  __m512 acc[NP][NT];
  for (int i = 0; i < NP; ++i)
    for (int j = 0; j < NT; ++j) acc[i][j] = _mm512_setzero_ps();
  for (int64_t k = 0; k < c.cols; ++k) {
    __m512 w[NP];
    RT_UNROLL(4)
    for (int i = 0; i < NP; ++i) w[i] = L::sixteen(p + i * c.pstride + k * kPanelRows);
    const float * xk = c.xt + k * c.xs;
    RT_UNROLL(16)
    for (int j = 0; j < NT; ++j) {
      const __m512 xb = _mm512_set1_ps(xk[j]);
      RT_UNROLL(4)
      for (int i = 0; i < NP; ++i) acc[i][j] = _mm512_fmadd_ps(w[i], xb, acc[i][j]);
    }
  }
  for (int i = 0; i < NP; ++i) {
    for (int j = 0; j < NT; ++j) {
      float * dst = c.y + j * c.ldy + i * kPanelRows;
      if (c.rows_left - i * kPanelRows >= kPanelRows) {
        _mm512_storeu_ps(dst, acc[i][j]);
      } else {
        alignas(64) float v[kPanelRows];
        _mm512_store_ps(v, acc[i][j]);
        store_rows(dst, v, c.rows_left - i * kPanelRows);
      }
    }
  }
}
#endif

#ifdef RT_X86_SIMD
// AVX2: a panel as two halves of 8 rows, NP panels against NT (at most 4) tokens.
template <class L, int NP, int NT>
RT_AVX2 void avx2_panels(const typename L::elem * p, const panel_call & c) {
  __m256 acc[2 * NP][NT];
  for (int u = 0; u < 2 * NP; ++u)
    for (int j = 0; j < NT; ++j) acc[u][j] = _mm256_setzero_ps();
  for (int64_t k = 0; k < c.cols; ++k) {
    const float * xk = c.xt + k * c.xs;
    RT_UNROLL(8)
    for (int u = 0; u < 2 * NP; ++u) {
      const __m256 w = L::eight(p + (u / 2) * c.pstride + k * kPanelRows + (u % 2) * 8);
      RT_UNROLL(6)
      for (int j = 0; j < NT; ++j) acc[u][j] = _mm256_fmadd_ps(w, _mm256_set1_ps(xk[j]), acc[u][j]);
    }
  }
  for (int i = 0; i < NP; ++i) {
    for (int j = 0; j < NT; ++j) {
      alignas(32) float v[kPanelRows];
      _mm256_store_ps(v, acc[2 * i][j]);
      _mm256_store_ps(v + 8, acc[2 * i + 1][j]);
      store_rows(c.y + j * c.ldy + i * kPanelRows, v, c.rows_left - i * kPanelRows);
    }
  }
}
#endif

// Panels a kernel call takes for `nt` tokens: enough independent accumulators to cover the FMA latency.
constexpr int panels_for(int nt) { return nt >= 4 ? 1 : (nt >= 2 ? 2 : 4); }
// Tokens a kernel call takes at most: AVX-512's 32 registers hold 16 accumulators and the weights; AVX2's 16 hold 8
// and the broadcasts (at 6 tokens, 12 accumulators, AVX2 ran 16 tokens at 28 G against 50 G at 4: one thread,
// 2048 x 2048).
constexpr int kAvx512Tokens = 16;
constexpr int kAvx2Tokens = 4;
// Panels every chunk of a group's tokens takes before the next ones (the most panels_for gives a call, so a lone
// token's calls are as before; 4 panels of 2,048 FP16 columns are 256 KB, within L2).
constexpr int kPanelsAtOnce = panels_for(1);

using kernel_fn = void (*)(const void *, const panel_call &);

// Each path's kernel behind one signature (a build without the path never picks it).
template <cpu_float_path P, class L, int NP, int NT>
void run_kernel(const void * p, const panel_call & c) {
  [[maybe_unused]] const auto * w = static_cast<const typename L::elem *>(p);
  if constexpr (P == cpu_float_path::avx512) {
#ifdef RT_HAVE_AVX512
    avx512_panels<L, NP, NT>(w, c);
#endif
  } else {
#ifdef RT_X86_SIMD
    avx2_panels<L, NP, NT>(w, c);
#endif
  }
  (void)c;
}

// Path P's kernel for `nt` tokens (at most MAX) and `np` panels (panels_for(nt), or 1 for a remainder).
template <cpu_float_path P, class L, int MAX, int NT = 1>
kernel_fn pick_kernel(int nt, int np) {
  if constexpr (NT > MAX) {
    (void)nt;
    (void)np;
    return nullptr;
  } else {
    if (nt == NT) return np == 1 ? &run_kernel<P, L, 1, NT> : &run_kernel<P, L, panels_for(NT), NT>;
    return pick_kernel<P, L, MAX, NT + 1>(nt, np);
  }
}

// Panels [p0, p1) of one matrix against one group of nt tokens (xt column by column), on `path`.
template <class L>
void run_group(const typename L::elem * base, const panel_call & proto, int64_t p0, int64_t p1, int nt, cpu_float_path path) {
  if (path == cpu_float_path::scalar) {
    for (int64_t p = p0; p < p1; ++p) {
      panel_call c = proto;
      c.y += p * kPanelRows;
      c.rows_left -= p * kPanelRows;
      scalar_panel<L>(base + p * c.pstride, c, nt);
    }
    return;
  }
  const int chunk = path == cpu_float_path::avx512 ? kAvx512Tokens : kAvx2Tokens;
  // Every chunk of tokens meets a few panels before the next panels: the panels come from memory once and from L2
  // for the other chunks (chunk by chunk over all the panels read them from memory once a chunk: AVX2 ran 16 tokens,
  // four chunks, at 28 G against 45 G at 128 tokens).
  for (int64_t b0 = p0; b0 < p1; b0 += kPanelsAtOnce) {
    const int64_t b1 = std::min(p1, b0 + kPanelsAtOnce);
    for (int j0 = 0; j0 < nt; j0 += chunk) {
      const int n = std::min(chunk, nt - j0);
      const int np = panels_for(n);
      const auto pick = [&](int panels) {
        return path == cpu_float_path::avx512 ? pick_kernel<cpu_float_path::avx512, L, kAvx512Tokens>(n, panels)
                                          : pick_kernel<cpu_float_path::avx2, L, kAvx2Tokens>(n, panels);
      };
      const kernel_fn many = pick(np), one = pick(1);
      for (int64_t p = b0; p < b1; p += (p + np <= b1 ? np : 1)) {
        panel_call c = proto;
        c.xt += j0;
        c.y += j0 * c.ldy + p * kPanelRows;
        c.rows_left -= p * kPanelRows;
        (p + np <= b1 ? many : one)(base + p * c.pstride, c);
      }
    }
  }
}

// Tokens split into groups of at most 16, as even as possible (17 tokens: 9 and 8, not 16 and 1).
struct token_groups {
  int count = 0;
  int start(int g, int tokens) const { return static_cast<int>(static_cast<int64_t>(tokens) * g / count); }
};

}  // namespace

int dense_panels_pass_groups(int64_t cols) {
  constexpr int64_t kPassBytes = 512 * 1024;
  return static_cast<int>(std::max<int64_t>(1, kPassBytes / (std::max<int64_t>(1, cols) * 4) / kPanelRows));
}

const char * dense_panels_path() { return cpu_float_path_name(cpu_float_path_active()); }

void dense_panels_build(const tensor_view & w, thread_pool & pool, dense_panels & p) {
  p = dense_panels{};
  p.type = w.type;
  p.rows = w.shape[0];
  p.cols = w.shape[1];
  const int64_t np = p.panels(), cols = p.cols, rows = p.rows;
  const size_t n = static_cast<size_t>(np * cols * kPanelRows);
  if (w.type == dtype::f32) p.full.assign(n, 0.0f);
  else p.half.assign(n, 0);
  const auto relay = [&](const auto * src, auto * dst) {
    pool.parallel_for(np, [&](int64_t b, int64_t e) {
      for (int64_t q = b; q < e; ++q)
        for (int64_t r = q * kPanelRows; r < std::min(rows, (q + 1) * kPanelRows); ++r)
          for (int64_t k = 0; k < cols; ++k) dst[(q * cols + k) * kPanelRows + (r - q * kPanelRows)] = src[r * cols + k];
    }, 4);
  };
  if (w.type == dtype::f32) relay(static_cast<const float *>(w.data), p.full.data());
  else relay(static_cast<const uint16_t *>(w.data), p.half.data());
}

void dense_panels_rows_f32(const dense_panels & p, int64_t q, float * out) {
  const int64_t cols = p.cols;
  const auto unpack = [&](auto lanes, const auto * panel) {
    using L = decltype(lanes);
    for (int64_t k = 0; k < cols; ++k)
      for (int l = 0; l < kPanelRows; ++l) out[l * cols + k] = L::one(panel[k * kPanelRows + l]);
  };
  const int64_t base = q * cols * kPanelRows;
  switch (p.type) {
    case dtype::f32: return unpack(f32_lanes{}, p.full.data() + base);
    case dtype::bf16: return unpack(bf16_lanes{}, p.half.data() + base);
    default: return unpack(f16_lanes{}, p.half.data() + base);
  }
}

void dense_panels_matmul(const dense_job * jobs, int count, const float * x, int64_t ldx, int tokens, thread_pool & pool,
                         dense_panels_scratch * scratch) {
  if (count <= 0 || tokens <= 0) return;
  const int64_t cols = jobs[0].w->cols;
  token_groups groups;
  groups.count = (tokens + kPanelRows - 1) / kPanelRows;
  // Each group column by column: group g's (k, j) at xt[start_g * cols + k * nt_g + j].
  dense_panels_scratch own;
  std::vector<float> & xt = (scratch ? *scratch : own).xt;
  xt.resize(static_cast<size_t>(tokens) * static_cast<size_t>(cols));
  for (int g = 0; g < groups.count; ++g) {
    const int t0 = groups.start(g, tokens), nt = groups.start(g + 1, tokens) - t0;
    float * dst = xt.data() + static_cast<int64_t>(t0) * cols;
    for (int j = 0; j < nt; ++j) {
      const float * src = x + static_cast<int64_t>(t0 + j) * ldx;
      for (int64_t k = 0; k < cols; ++k) dst[k * nt + j] = src[k];
    }
  }
  const int pass = dense_panels_pass_groups(cols);
  const cpu_float_path path = cpu_float_path_active();
  int64_t total = 0;
  for (int i = 0; i < count; ++i) total += jobs[i].w->panels();
  pool.parallel_for(total, [&](int64_t b, int64_t e) {
    int64_t first = 0;
    for (int i = 0; i < count && first < e; first += jobs[i].w->panels(), ++i) {
      const dense_panels & w = *jobs[i].w;
      const int64_t p0 = std::max<int64_t>(b, first) - first, p1 = std::min<int64_t>(e, first + w.panels()) - first;
      if (p0 >= p1) continue;
      const auto run = [&](int g, int64_t q0, int64_t q1) {
        const int t0 = groups.start(g, tokens), nt = groups.start(g + 1, tokens) - t0;
        panel_call c;
        c.cols = cols;
        c.pstride = cols * kPanelRows;
        c.xt = xt.data() + static_cast<int64_t>(t0) * cols;
        c.xs = nt;
        c.y = jobs[i].y + static_cast<int64_t>(t0) * jobs[i].ldy;
        c.ldy = jobs[i].ldy;
        c.rows_left = w.rows;
        switch (w.type) {
          case dtype::f32: run_group<f32_lanes>(w.full.data(), c, q0, q1, nt, path); break;
          case dtype::bf16: run_group<bf16_lanes>(w.half.data(), c, q0, q1, nt, path); break;
          default: run_group<f16_lanes>(w.half.data(), c, q0, q1, nt, path); break;
        }
      };
      // A lone group (decode, a short prompt) takes its panels several at a time when it has few tokens; more
      // groups take one panel at a time against each group of the pass, so the panel is read from L2 for the next.
      if (groups.count == 1) {
        run(0, p0, p1);
        continue;
      }
      for (int g0 = 0; g0 < groups.count; g0 += pass)
        for (int64_t q = p0; q < p1; ++q)
          for (int g = g0; g < std::min(groups.count, g0 + pass); ++g) run(g, q, q + 1);
    }
  }, 4);
}

void dense_panels_matmul(const dense_panels & w, const float * x, int64_t ldx, int tokens, float * y, int64_t ldy,
                         thread_pool & pool, dense_panels_scratch * scratch) {
  const dense_job job{&w, y, ldy};
  dense_panels_matmul(&job, 1, x, ldx, tokens, pool, scratch);
}

namespace {

#ifdef RT_X86_SIMD
// One element widened with F16C / a shift (L::one's portable conversions cost more than the FMA here).
template <class L>
RT_AVX2 inline float widen(typename L::elem v) {
  if constexpr (std::is_same_v<L, f16_lanes>) return _cvtsh_ss(v);
  else return L::one(v);
}

// Eight rows' chains side by side (independent FMAs hide each other's latency).
template <class L>
RT_AVX2 void avx2_chain_rows(const typename L::elem * const * w, int n, const float * x, int64_t cols, float * y) {
  float a[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  for (int64_t k = 0; k < cols; ++k) {
    const float xk = x[k];
    RT_UNROLL(8)
    for (int i = 0; i < 8; ++i)
      a[i] = _mm_cvtss_f32(_mm_fmadd_ss(_mm_set_ss(widen<L>(w[i < n ? i : 0][k])), _mm_set_ss(xk), _mm_set_ss(a[i])));
  }
  for (int i = 0; i < n; ++i) y[i] = a[i];
}
#endif

template <class L>
void chain_rows(const tensor_view & w, const int32_t * rows, int n, const float * x, float * y) {
  const int64_t cols = w.shape[1];
  const auto * base = static_cast<const typename L::elem *>(w.data);
#ifdef RT_X86_SIMD
  if (cpu_kernels_simd()) {
    for (int i = 0; i < n; i += 8) {
      const typename L::elem * r[8];
      const int m = std::min(8, n - i);
      for (int j = 0; j < m; ++j) r[j] = base + static_cast<int64_t>(rows[i + j]) * cols;
      avx2_chain_rows<L>(r, m, x, cols, y + i);
    }
    return;
  }
#endif
  for (int i = 0; i < n; ++i) y[i] = chain_reference<L>(base + static_cast<int64_t>(rows[i]) * cols, 1, x, 1, cols);
}

}  // namespace

void cpu_rows_dot_chain(const tensor_view & w, const int32_t * rows, int n, const float * x, float * y) {
  switch (w.type) {
    case dtype::f32: return chain_rows<f32_lanes>(w, rows, n, x, y);
    case dtype::bf16: return chain_rows<bf16_lanes>(w, rows, n, x, y);
    default: return chain_rows<f16_lanes>(w, rows, n, x, y);
  }
}

float dense_chain_dot_reference(const tensor_view & w, int64_t r, const float * x) {
  const int64_t cols = w.shape[1];
  switch (w.type) {
    case dtype::f32: return chain_reference<f32_lanes>(static_cast<const float *>(w.data) + r * cols, 1, x, 1, cols);
    case dtype::bf16: return chain_reference<bf16_lanes>(static_cast<const uint16_t *>(w.data) + r * cols, 1, x, 1, cols);
    default: return chain_reference<f16_lanes>(static_cast<const uint16_t *>(w.data) + r * cols, 1, x, 1, cols);
  }
}

}  // namespace rt
