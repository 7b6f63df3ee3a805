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

namespace rt {

namespace {

#ifdef RT_SCREEN_X86
RT_T_AVX2 inline int32_t hsum(__m256i v) {
  __m128i h = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
  h = _mm_add_epi32(h, _mm_shuffle_epi32(h, 0x4E));
  h = _mm_add_epi32(h, _mm_shuffle_epi32(h, 0xB1));
  return _mm_cvtsi128_si32(h);
}

// |x| against w with x's sign (both in [-127, 127], so maddubs's pair sums stay below 2^15); x as given.
RT_T_AVX2 int32_t dot_avx2(const int8_t * q, const int8_t * x, int n) {
  __m256i acc0 = _mm256_setzero_si256(), acc1 = _mm256_setzero_si256();
  const __m256i ones = _mm256_set1_epi16(1);
  int i = 0;
  for (; i + 64 <= n; i += 64) {
    const __m256i w0 = _mm256_loadu_si256(reinterpret_cast<const __m256i *>(q + i));
    const __m256i v0 = _mm256_loadu_si256(reinterpret_cast<const __m256i *>(x + i));
    const __m256i w1 = _mm256_loadu_si256(reinterpret_cast<const __m256i *>(q + i + 32));
    const __m256i v1 = _mm256_loadu_si256(reinterpret_cast<const __m256i *>(x + i + 32));
    acc0 = _mm256_add_epi32(acc0, _mm256_madd_epi16(_mm256_maddubs_epi16(_mm256_sign_epi8(v0, v0), _mm256_sign_epi8(w0, v0)), ones));
    acc1 = _mm256_add_epi32(acc1, _mm256_madd_epi16(_mm256_maddubs_epi16(_mm256_sign_epi8(v1, v1), _mm256_sign_epi8(w1, v1)), ones));
  }
  int32_t s = hsum(_mm256_add_epi32(acc0, acc1));
  for (; i < n; ++i) s += static_cast<int32_t>(q[i]) * x[i];
  return s;
}

// x shifted to unsigned (x + 128) against w: the sum less 128 times the row's sum of codes, one dpbusd a 32 bytes.
RT_T_AVX512VNNI int32_t dot_vnni_shifted(const int8_t * q, const uint8_t * xu, int n, int32_t q_sum) {
  __m256i acc0 = _mm256_setzero_si256(), acc1 = _mm256_setzero_si256();
  int i = 0;
  for (; i + 64 <= n; i += 64) {
    acc0 = _mm256_dpbusd_epi32(acc0, _mm256_loadu_si256(reinterpret_cast<const __m256i *>(xu + i)),
                               _mm256_loadu_si256(reinterpret_cast<const __m256i *>(q + i)));
    acc1 = _mm256_dpbusd_epi32(acc1, _mm256_loadu_si256(reinterpret_cast<const __m256i *>(xu + i + 32)),
                               _mm256_loadu_si256(reinterpret_cast<const __m256i *>(q + i + 32)));
  }
  int32_t s = hsum(_mm256_add_epi32(acc0, acc1));
  for (; i < n; ++i) s += static_cast<int32_t>(q[i]) * xu[i];
  return s - 128 * q_sum;
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

int32_t dot_prepared(const int8_t * q, const int8_t * x, const uint8_t * xu, int n, int32_t q_sum, bool shifted) {
#ifdef RT_SCREEN_X86
  if (shifted) return dot_vnni_shifted(q, xu, n, q_sum);
  if (cpu_isa_active() != cpu_isa::scalar) return dot_avx2(q, x, n);
#endif
  (void)xu;
  (void)q_sum;
  (void)shifted;
  return lm_head_screen_dot_reference(q, x, n);
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

int32_t lm_head_screen_dot(const int8_t * q, const int8_t * x, int n) {
  const bool shifted = shifted_path();
  std::vector<uint8_t> xu(static_cast<size_t>(n));
  int32_t q_sum = 0;
  for (int i = 0; i < n; ++i) {
    xu[static_cast<size_t>(i)] = static_cast<uint8_t>(x[i] + 128);
    q_sum += q[i];
  }
  return dot_prepared(q, x, xu.data(), n, q_sum, shifted);
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
  for (float m : s.max_abs) s.max_abs_all = std::max(s.max_abs_all, m);
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
                           int64_t ldx, int n, thread_pool & pool, int32_t * next, lm_head_screen_stats & stats) {
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
  // Each row's interval [lo, hi] for each screened token holds the full product's logit. Kept: each row's hi, as a
  // float rounded up (a row is only ever kept by that), and each token's largest lo (the floor).
  std::vector<float> hi(static_cast<size_t>(n) * V);
  std::vector<double> floor(static_cast<size_t>(n), -std::numeric_limits<double>::infinity());
  std::mutex floor_mu;
  pool.parallel_for(V, [&](int64_t r0, int64_t r1) {
    std::vector<double> local(static_cast<size_t>(n), -std::numeric_limits<double>::infinity());
    for (int64_t r = r0; r < r1; ++r) {
      const int8_t * q = s.q.data() + r * H;
      const double scale = s.scale[static_cast<size_t>(r)], err = s.err[static_cast<size_t>(r)];
      const double m = s.max_abs[static_cast<size_t>(r)], l1 = s.l1[static_cast<size_t>(r)];
      for (int t = 0; t < n; ++t) {
        if (!screened[static_cast<size_t>(t)]) continue;
        const int32_t dot = dot_prepared(q, xq.data() + static_cast<size_t>(t) * H, xu.data() + static_cast<size_t>(t) * H,
                                         H, s.q_sum[static_cast<size_t>(r)], shifted);
        const double a = scale * sx[static_cast<size_t>(t)] * dot;
        const double sum = l1x[static_cast<size_t>(t)];
        // |x.(w - scale q)| + |(x - sx xq).(scale q)| + the full product's own rounding, with a margin for this
        // double arithmetic.
        const double b = (sum * err + dx[static_cast<size_t>(t)] * scale * l1 + gamma * sum * m) * (1 + 1e-9) +
                         1e-12 * std::fabs(a) + std::numeric_limits<double>::denorm_min();
        local[static_cast<size_t>(t)] = std::max(local[static_cast<size_t>(t)], a - b);
        hi[static_cast<size_t>(t) * V + r] = round_up(a + b);
      }
    }
    std::lock_guard<std::mutex> lock(floor_mu);
    for (int t = 0; t < n; ++t) floor[static_cast<size_t>(t)] = std::max(floor[static_cast<size_t>(t)], local[static_cast<size_t>(t)]);
  }, 256);
  std::vector<int32_t> candidates;
  std::vector<float> exact;
  for (int t = 0; t < n; ++t) {
    const float * xt = x + t * ldx;
    if (!screened[static_cast<size_t>(t)]) {
      std::vector<float> logits(static_cast<size_t>(V));
      dense_panels_matmul(panels, xt, ldx, 1, logits.data(), V, pool);
      next[t] = ref::argmax(logits.data(), V);
      ++stats.full_products;
      continue;
    }
    const float * ht = hi.data() + static_cast<size_t>(t) * V;
    const double token_floor = floor[static_cast<size_t>(t)];
    candidates.clear();
    for (int r = 0; r < V; ++r) {
      if (ht[r] >= token_floor) candidates.push_back(r);  // else below another row's smallest possible logit
    }
    exact.resize(candidates.size());
    cpu_rows_dot_chain(w, candidates.data(), static_cast<int>(candidates.size()), xt, exact.data());
    stats.exact_rows += candidates.size();
    int32_t best = -1;
    float best_v = 0;
    for (size_t i = 0; i < candidates.size(); ++i) {
      const float v = exact[i];
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
