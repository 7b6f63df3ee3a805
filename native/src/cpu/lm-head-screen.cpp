#include "cpu/lm-head-screen.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <mutex>

#include "cpu/cpu-kernels.h"
#include "cpu/q4-q8-dot.h"
#include "cpu/ref-ops.h"

#if (defined(__GNUC__) || defined(__clang__)) && (defined(__x86_64__) || defined(__i386__))
#define RT_SCREEN_X86 1
#define RT_T_AVX2 __attribute__((target("avx2,fma,f16c")))
#define RT_T_AVX512VNNI __attribute__((target("avx2,fma,f16c,avx512f,avx512bw,avx512vl,avx512dq,avx512vnni")))
#include "cpu/x86-intrinsics.h"
#endif
#include "cpu/simd-lanes.h"

namespace rt {

namespace {

#ifdef RT_SCREEN_X86
RT_T_AVX2 inline int32_t hsum(__m256i v) {
  __m128i h = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
  h = _mm_add_epi32(h, _mm_shuffle_epi32(h, 0x4E));
  h = _mm_add_epi32(h, _mm_shuffle_epi32(h, 0xB1));
  return _mm_cvtsi128_si32(h);
}

// One row against NT tokens at once: the row's 32-byte chunks are loaded once for all tokens, and each token keeps
// NC accumulators, so NT * NC independent dpbusd chains cover the instruction's latency (two chains a row, one
// token at a time, ran 8 tokens of OLMoE's head at 60 ns a row and token).
template <int NT, int NC>
RT_T_AVX512VNNI void dots_vnni(const int8_t * q, const uint8_t * xu, int64_t ldx, int n, const int32_t q_sum, int32_t * out) {
  __m256i acc[NT][NC];
  for (int t = 0; t < NT; ++t)
    for (int c = 0; c < NC; ++c) acc[t][c] = _mm256_setzero_si256();
  int i = 0;
  for (; i + 32 * NC <= n; i += 32 * NC) {
    _mm_prefetch(reinterpret_cast<const char *>(q + 2 * n + i), _MM_HINT_T0);
    RT_UNROLL(4)
    for (int c = 0; c < NC; ++c) {
      const __m256i w = _mm256_loadu_si256(reinterpret_cast<const __m256i *>(q + i + 32 * c));
      RT_UNROLL(8)
      for (int t = 0; t < NT; ++t)
        acc[t][c] = _mm256_dpbusd_epi32(acc[t][c], _mm256_loadu_si256(reinterpret_cast<const __m256i *>(xu + t * ldx + i + 32 * c)), w);
    }
  }
  for (int t = 0; t < NT; ++t) {
    __m256i a = acc[t][0];
    for (int c = 1; c < NC; ++c) a = _mm256_add_epi32(a, acc[t][c]);
    int32_t sum = hsum(a);
    for (int j = i; j < n; ++j) sum += static_cast<int32_t>(q[j]) * xu[t * ldx + j];
    out[t] = sum - 128 * q_sum;
  }
}

// NR rows (qs apart) against NT tokens: each 32-byte load of a row or a token serves the other side's NT or NR
// dpbusd, where one row at a time loaded a token's chunk for every dpbusd (and L1 no longer held 16 tokens' rows).
template <int NR, int NT>
RT_T_AVX512VNNI void dots_vnni_tile(const int8_t * q, int64_t qs, const uint8_t * xu, int64_t ldx, int n, const int32_t * q_sum,
                                    int32_t * out, int64_t ldo) {
  __m256i acc[NR][NT];
  for (int r = 0; r < NR; ++r)
    for (int t = 0; t < NT; ++t) acc[r][t] = _mm256_setzero_si256();
  int i = 0;
  for (; i + 32 <= n; i += 32) {
    __m256i w[NR];
    RT_UNROLL(4)
    for (int r = 0; r < NR; ++r) {
      _mm_prefetch(reinterpret_cast<const char *>(q + r * qs + NR * qs + i), _MM_HINT_T0);
      w[r] = _mm256_loadu_si256(reinterpret_cast<const __m256i *>(q + r * qs + i));
    }
    RT_UNROLL(4)
    for (int t = 0; t < NT; ++t) {
      const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i *>(xu + t * ldx + i));
      RT_UNROLL(4)
      for (int r = 0; r < NR; ++r) acc[r][t] = _mm256_dpbusd_epi32(acc[r][t], v, w[r]);
    }
  }
  for (int r = 0; r < NR; ++r) {
    for (int t = 0; t < NT; ++t) {
      int32_t sum = hsum(acc[r][t]);
      for (int j = i; j < n; ++j) sum += static_cast<int32_t>(q[r * qs + j]) * xu[t * ldx + j];
      out[r * ldo + t] = sum - 128 * q_sum[r];
    }
  }
}

// The same with AVX2's sign trick (|x| against w with x's sign).
template <int NT, int NC>
RT_T_AVX2 void dots_avx2(const int8_t * q, const int8_t * x, int64_t ldx, int n, int32_t * out) {
  __m256i acc[NT][NC];
  for (int t = 0; t < NT; ++t)
    for (int c = 0; c < NC; ++c) acc[t][c] = _mm256_setzero_si256();
  const __m256i ones = _mm256_set1_epi16(1);
  int i = 0;
  for (; i + 32 * NC <= n; i += 32 * NC) {
    RT_UNROLL(4)
    for (int c = 0; c < NC; ++c) {
      const __m256i w = _mm256_loadu_si256(reinterpret_cast<const __m256i *>(q + i + 32 * c));
      RT_UNROLL(8)
      for (int t = 0; t < NT; ++t) {
        const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i *>(x + t * ldx + i + 32 * c));
        acc[t][c] = _mm256_add_epi32(acc[t][c], _mm256_madd_epi16(_mm256_maddubs_epi16(_mm256_sign_epi8(v, v), _mm256_sign_epi8(w, v)), ones));
      }
    }
  }
  for (int t = 0; t < NT; ++t) {
    __m256i a = acc[t][0];
    for (int c = 1; c < NC; ++c) a = _mm256_add_epi32(a, acc[t][c]);
    int32_t sum = hsum(a);
    for (int j = i; j < n; ++j) sum += static_cast<int32_t>(q[j]) * x[t * ldx + j];
    out[t] = sum;
  }
}
#endif

// The activations as the active path reads them: as they are, or shifted to unsigned for dpbusd.
bool shifted_path() {
#ifdef RT_SCREEN_X86
  return cpu_isa_active() == cpu_isa::avx512_vnni;
#else
  return false;
#endif
}

// Row q against tokens [0, n) (x / xu rows `ldx` apart) on the active path: out[t], exactly.
void dots_prepared(const int8_t * q, const int8_t * x, const uint8_t * xu, int64_t ldx, int H, int n, int32_t q_sum, bool shifted,
                   int32_t * out) {
  int t = 0;
#ifdef RT_SCREEN_X86
  if (shifted) {
    for (; t + 4 <= n; t += 4) dots_vnni<4, 2>(q, xu + t * ldx, ldx, H, q_sum, out + t);
    for (; t < n; ++t) dots_vnni<1, 4>(q, xu + t * ldx, ldx, H, q_sum, out + t);
    return;
  }
  if (cpu_isa_active() != cpu_isa::scalar) {
    for (; t + 4 <= n; t += 4) dots_avx2<4, 2>(q, x + t * ldx, ldx, H, out + t);
    for (; t < n; ++t) dots_avx2<1, 4>(q, x + t * ldx, ldx, H, out + t);
    return;
  }
#endif
  (void)xu;
  (void)q_sum;
  (void)shifted;
  for (; t < n; ++t) out[t] = lm_head_screen_dot_reference(q, x + t * ldx, H);
}

// Rows [0, nr) of q (qs apart) against tokens [0, n): out[r * ldo + t], exactly. On the VNNI path, from 12 tokens,
// in tiles of four rows by four tokens (16 tokens of OLMoE's head: 11.6 ms against 13.7 a row at a time; at 4 and 8
// tokens the tiles ran 4.9-5.1 / 6.5-6.8 ms against 3.6 / 6.4).
void dots_prepared_rows(const int8_t * q, int64_t qs, int nr, const int8_t * x, const uint8_t * xu, int64_t ldx, int H, int n,
                        const int32_t * q_sum, bool shifted, int32_t * out, int64_t ldo) {
  int r = 0;
#ifdef RT_SCREEN_X86
  if (shifted && n >= 12) {
    for (; r + 4 <= nr; r += 4) {
      int t = 0;
      for (; t + 4 <= n; t += 4) dots_vnni_tile<4, 4>(q + r * qs, qs, xu + t * ldx, ldx, H, q_sum + r, out + r * ldo + t, ldo);
      for (int k = 0; k < 4; ++k) dots_prepared(q + (r + k) * qs, x + t * ldx, xu + t * ldx, ldx, H, n - t, q_sum[r + k], shifted, out + (r + k) * ldo + t);
    }
  }
#endif
  for (; r < nr; ++r) dots_prepared(q + r * qs, x, xu, ldx, H, n, q_sum[r], shifted, out + r * ldo);
}

// v / scale as an INT8 code in [-127, 127] (0 for a zero scale).
int int8_code(double v, double scale) {
  return scale > 0 ? static_cast<int>(std::clamp(std::nearbyint(v / scale), -127.0, 127.0)) : 0;
}

float round_up(double v) {
  const float f = static_cast<float>(v);
  return static_cast<double>(f) >= v ? f : std::nextafter(f, std::numeric_limits<float>::infinity());
}

}  // namespace

double lm_head_screen_gamma(int n) {
  const double u = std::ldexp(1.0, -24);
  const double nu = (n + 2) * u;
  return nu / (1.0 - nu);
}

int32_t lm_head_screen_dot_reference(const int8_t * q, const int8_t * x, int n) {
  int32_t s = 0;
  for (int i = 0; i < n; ++i) s += static_cast<int32_t>(q[i]) * x[i];
  return s;
}

void lm_head_screen_dots(const int8_t * q, int64_t qs, int rows, const int8_t * x, int64_t ldx, int cols, int n, int32_t * out,
                         int64_t ldo) {
  const bool shifted = shifted_path();
  std::vector<uint8_t> xu(static_cast<size_t>(n) * static_cast<size_t>(ldx));
  std::vector<int32_t> q_sum(static_cast<size_t>(rows), 0);
  for (int r = 0; r < rows; ++r)
    for (int i = 0; i < cols; ++i) q_sum[static_cast<size_t>(r)] += q[r * qs + i];
  for (int t = 0; t < n; ++t)
    for (int i = 0; i < cols; ++i) xu[static_cast<size_t>(t * ldx + i)] = static_cast<uint8_t>(x[t * ldx + i] + 128);
  dots_prepared_rows(q, qs, rows, x, xu.data(), ldx, cols, n, q_sum.data(), shifted, out, ldo);
}

namespace {

// Sizes s for a [rows, cols] head, empty.
void screen_reset(int rows, int cols, lm_head_screen & s) {
  s = lm_head_screen{};
  s.rows = rows;
  s.cols = cols;
  s.q.resize(static_cast<size_t>(rows) * cols);
  s.scale.resize(static_cast<size_t>(rows));
  s.err.resize(static_cast<size_t>(rows));
  s.max_abs.resize(static_cast<size_t>(rows));
  s.l1.resize(static_cast<size_t>(rows));
  s.q_sum.resize(static_cast<size_t>(rows));
}

// Row r of the INT8 copy from its float values; false when one is not finite.
bool screen_row(const float * row, int64_t r, lm_head_screen & s) {
  const int cols = s.cols;
  bool finite = true;
  float m = 0;
  for (int i = 0; i < cols; ++i) {
    if (!std::isfinite(row[i])) finite = false;
    m = std::max(m, std::fabs(row[i]));
  }
  // The screen's arithmetic takes the scale as stored (a float): codes and error are measured against that.
  const float scale = m / 127.0f;
  int8_t * q = s.q.data() + r * cols;
  double err = 0;
  int32_t l1 = 0, sum = 0;
  for (int i = 0; i < cols; ++i) {
    const double v = row[i];
    const int k = int8_code(v, scale);
    q[i] = static_cast<int8_t>(k);
    l1 += k < 0 ? -k : k;
    sum += k;
    err = std::max(err, std::fabs(v - static_cast<double>(scale) * k));
  }
  s.scale[static_cast<size_t>(r)] = scale;
  s.err[static_cast<size_t>(r)] = round_up(err);
  s.max_abs[static_cast<size_t>(r)] = m;
  s.l1[static_cast<size_t>(r)] = l1;
  s.q_sum[static_cast<size_t>(r)] = sum;
  return finite;
}

void screen_finish(const std::vector<char> & finite, lm_head_screen & s) {
  s.ok = std::all_of(finite.begin(), finite.end(), [](char f) { return f != 0; });
  for (size_t r = 0; r < s.max_abs.size(); ++r) {
    s.max_abs_all = std::max(s.max_abs_all, s.max_abs[r]);
    s.err_max = std::max(s.err_max, s.err[r]);
    s.scale_l1_max = std::max(s.scale_l1_max, static_cast<double>(s.scale[r]) * s.l1[r]);
  }
}

}  // namespace

void lm_head_screen_build(const tensor_view & w, thread_pool & pool, lm_head_screen & s) {
  const int rows = static_cast<int>(w.shape[0]), cols = static_cast<int>(w.shape[1]);
  screen_reset(rows, cols, s);
  std::vector<char> finite(static_cast<size_t>(rows), 1);
  pool.parallel_for(rows, [&](int64_t r0, int64_t r1) {
    std::vector<float> row(static_cast<size_t>(cols));
    for (int64_t r = r0; r < r1; ++r) {
      cpu_row_to_f32(w, r, row.data());
      finite[static_cast<size_t>(r)] = screen_row(row.data(), r, s);
    }
  }, 64);
  screen_finish(finite, s);
}

void lm_head_screen_build(const dense_panels & p, thread_pool & pool, lm_head_screen & s) {
  const int rows = static_cast<int>(p.rows), cols = static_cast<int>(p.cols);
  screen_reset(rows, cols, s);
  std::vector<char> finite(static_cast<size_t>(rows), 1);
  pool.parallel_for(p.panels(), [&](int64_t q0, int64_t q1) {
    std::vector<float> block(static_cast<size_t>(kPanelRows) * cols);
    for (int64_t q = q0; q < q1; ++q) {
      dense_panels_rows_f32(p, q, block.data());
      for (int l = 0; l < kPanelRows && q * kPanelRows + l < rows; ++l)
        finite[static_cast<size_t>(q * kPanelRows + l)] = screen_row(block.data() + static_cast<size_t>(l) * cols, q * kPanelRows + l, s);
    }
  }, 4);
  screen_finish(finite, s);
}

void lm_head_screen_argmax(const lm_head_screen & s, const tensor_view & w, const dense_panels & panels, const float * x,
                           int64_t ldx, int n, thread_pool & pool, int32_t * next, lm_head_screen_stats & stats,
                           lm_head_screen_scratch * scratch) {
  lm_head_screen_scratch own;
  lm_head_screen_scratch & mem = scratch ? *scratch : own;
  const int V = s.rows, H = s.cols;
  const double gamma = lm_head_screen_gamma(H);
  // Per token: INT8 activations (one scale), their largest rounding error, and sum |x|.
  std::vector<int8_t> xq(static_cast<size_t>(n) * H);
  std::vector<uint8_t> xu(static_cast<size_t>(n) * H);
  const bool shifted = shifted_path();
  std::vector<double> sx(static_cast<size_t>(n)), dx(static_cast<size_t>(n)), l1x(static_cast<size_t>(n));
  std::vector<char> screened(static_cast<size_t>(n), 0);
  for (int t = 0; t < n; ++t) {
    const float * xt = x + t * ldx;
    double m = 0, sum = 0;
    bool finite = true;
    for (int i = 0; i < H; ++i) {
      finite = finite && std::isfinite(xt[i]);
      m = std::max(m, static_cast<double>(std::fabs(xt[i])));
      sum += std::fabs(xt[i]);
    }
    // No partial sum of a product row can reach float's range below this: the full product holds no Inf or NaN.
    if (!s.ok || !finite || sum * s.max_abs_all * (1 + gamma) >= 1e37) continue;
    const double scale = m / 127.0;
    double d = 0;
    for (int i = 0; i < H; ++i) {
      const int k = int8_code(xt[i], scale);
      xq[static_cast<size_t>(t) * H + i] = static_cast<int8_t>(k);
      xu[static_cast<size_t>(t) * H + i] = static_cast<uint8_t>(k + 128);
      d = std::max(d, std::fabs(xt[i] - scale * k));
    }
    sx[static_cast<size_t>(t)] = scale;
    dx[static_cast<size_t>(t)] = d;
    l1x[static_cast<size_t>(t)] = sum;
    screened[static_cast<size_t>(t)] = 1;
  }
  // |x.(w - scale q)| + |(x - sx xq).(scale q)| + the full product's own rounding, with a margin for this double
  // arithmetic, from a row's weight error, scale * l1 and largest |w| and its estimate's |a|. Every operation grows
  // with its inputs, so the bound at the head's largest terms is at least each row's.
  const auto bound = [&](int t, double err, double scale_l1, double m, double abs_a) {
    const double sum = l1x[static_cast<size_t>(t)];
    return (sum * err + dx[static_cast<size_t>(t)] * scale_l1 + gamma * sum * m) * (1 + 1e-9) + 1e-12 * abs_a +
           std::numeric_limits<double>::denorm_min();
  };
  const auto row_bound = [&](int t, int64_t r, double a) {
    const size_t i = static_cast<size_t>(r);
    return bound(t, s.err[i], static_cast<double>(s.scale[i]) * s.l1[i], s.max_abs[i], std::fabs(a));
  };
  const auto estimate = [&](int t, int64_t r, int32_t dot) { return s.scale[static_cast<size_t>(r)] * sx[static_cast<size_t>(t)] * dot; };
  // Pass 1, over the rows: every row's INT8 dot for every token (kept), and each token's largest estimate a and
  // largest |a|. The dots' buffer is kept across calls (a decode step would otherwise zero up to 13 MB each time).
  mem.dots.resize(static_cast<size_t>(n) * V);
  int32_t * const dots = mem.dots.data();
  std::vector<double> best(static_cast<size_t>(n), -std::numeric_limits<double>::infinity()), most(static_cast<size_t>(n), 0.0);
  std::mutex best_mu;
  pool.parallel_for(V, [&](int64_t r0, int64_t r1) {
    std::vector<double> local_best(static_cast<size_t>(n), -std::numeric_limits<double>::infinity()), local_most(static_cast<size_t>(n), 0.0);
    constexpr int kRows = 4;
    std::vector<int32_t> block(static_cast<size_t>(kRows) * n);
    for (int64_t r = r0; r < r1; ++r) {
      if ((r - r0) % kRows == 0) {
        const int nr = static_cast<int>(std::min<int64_t>(kRows, r1 - r));
        dots_prepared_rows(s.q.data() + r * H, H, nr, xq.data(), xu.data(), H, H, n, s.q_sum.data() + r, shifted, block.data(), n);
      }
      const int32_t * row = block.data() + ((r - r0) % kRows) * n;
      for (int t = 0; t < n; ++t) {
        const int32_t dot = row[t];
        dots[static_cast<size_t>(t) * V + static_cast<size_t>(r)] = dot;
        const double a = estimate(t, r, dot);
        local_best[static_cast<size_t>(t)] = std::max(local_best[static_cast<size_t>(t)], a);
        local_most[static_cast<size_t>(t)] = std::max(local_most[static_cast<size_t>(t)], std::fabs(a));
      }
    }
    std::lock_guard<std::mutex> lock(best_mu);
    for (int t = 0; t < n; ++t) {
      best[static_cast<size_t>(t)] = std::max(best[static_cast<size_t>(t)], local_best[static_cast<size_t>(t)]);
      most[static_cast<size_t>(t)] = std::max(most[static_cast<size_t>(t)], local_most[static_cast<size_t>(t)]);
    }
  }, 256);
  // Pass 2, per token: B, the bound at the head's largest terms, is at least each row's own bound b,
  // so a row whose estimate is below the best estimate less 2B cannot be the argmax (its logit is at most a + B, the
  // best row's at least best - B). The rows left take their own bound b; of those, the ones whose a + b reaches the
  // largest a - b are computed from the FP16 rows.
  std::vector<std::vector<int32_t>> kept(static_cast<size_t>(n));
  pool.parallel_for(n, [&](int64_t t0, int64_t t1) {
    for (int64_t ti = t0; ti < t1; ++ti) {
      const int t = static_cast<int>(ti);
      if (!screened[static_cast<size_t>(t)]) continue;
      const double B = bound(t, s.err_max, s.scale_l1_max, s.max_abs_all, most[static_cast<size_t>(t)]);
      const double threshold = best[static_cast<size_t>(t)] - 2 * B;
      const int32_t * dt = dots + static_cast<size_t>(t) * V;
      std::vector<int32_t> near;
      double floor = -std::numeric_limits<double>::infinity();
      for (int64_t r = 0; r < V; ++r) {
        const double a = estimate(t, r, dt[r]);
        if (a < threshold) continue;
        near.push_back(static_cast<int32_t>(r));
        floor = std::max(floor, a - row_bound(t, r, a));
      }
      std::vector<int32_t> & out = kept[static_cast<size_t>(t)];
      for (int32_t r : near) {
        const double a = estimate(t, r, dt[r]);
        if (a + row_bound(t, r, a) >= floor) out.push_back(r);  // else below another row's smallest possible logit
      }
    }
  }, 1);
  // The candidates' FP16 rows, in runs of 64 over the pool (a flat, random head leaves a thousand a token).
  constexpr size_t kRun = 64;
  std::vector<std::vector<float>> exact(static_cast<size_t>(n));
  std::vector<std::pair<int, size_t>> runs;
  for (int t = 0; t < n; ++t) {
    if (!screened[static_cast<size_t>(t)]) continue;
    exact[static_cast<size_t>(t)].resize(kept[static_cast<size_t>(t)].size());
    for (size_t i = 0; i < kept[static_cast<size_t>(t)].size(); i += kRun) runs.emplace_back(t, i);
  }
  pool.parallel_for(static_cast<int64_t>(runs.size()), [&](int64_t b0, int64_t b1) {
    for (int64_t k = b0; k < b1; ++k) {
      const auto [t, i] = runs[static_cast<size_t>(k)];
      const std::vector<int32_t> & rows = kept[static_cast<size_t>(t)];
      const int m = static_cast<int>(std::min(kRun, rows.size() - i));
      cpu_rows_dot_chain(w, rows.data() + i, m, x + t * ldx, exact[static_cast<size_t>(t)].data() + i);
    }
  }, 1);
  for (int t = 0; t < n; ++t) {
    const float * xt = x + t * ldx;
    if (!screened[static_cast<size_t>(t)]) {
      std::vector<float> logits(static_cast<size_t>(V));
      dense_panels_matmul(panels, xt, ldx, 1, logits.data(), V, pool, &mem.dense);
      next[t] = ref::argmax(logits.data(), V);
      ++stats.full_products;
      continue;
    }
    const std::vector<int32_t> & candidates = kept[static_cast<size_t>(t)];
    const std::vector<float> & values = exact[static_cast<size_t>(t)];
    stats.exact_rows += candidates.size();
    int32_t best = -1;
    float best_v = 0;
    for (size_t i = 0; i < candidates.size(); ++i) {
      const float v = values[i];
      if (std::isnan(v)) {
        best = -1;
        break;
      }
      if (best < 0 || v > best_v) {
        best = candidates[i];
        best_v = v;
      }
    }
    next[t] = best;
    ++stats.tokens;
  }
}

}  // namespace rt
