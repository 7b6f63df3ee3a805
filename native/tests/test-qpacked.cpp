// qpacked-v2: hand-derived bytes (values that are exact codebook multiples), the quantiser against the spec read
// literally and against a brute-force search over every FP16 scale, the AVX2 scale search against the scalar one, FP16
// rounding edge cases, and the CPU 4-bit dot kernels (AVX2 and scalar) against the reference unpack.
#include <algorithm>
#include <cstring>
#include <limits>

#include "cpu/cpu-kernels.h"
#include "quant/qpacked-search.h"
#include "quant/qpacked.h"
#include "test-helpers.h"

using namespace rt;

/** |kernel - reference| / (sum |w'*x| + 1e-6) for the 4-bit dot kernels. */
static const float MAX_REL_ERR_Q4_DOT = 1e-5f;
/** The quantiser's squared error over the brute-force optimum (every finite FP16 scale, nearest levels), on average
 *  and for the worst group, over groups of 32 (measured: 1.003 and 1.071). */
static const double MAX_MEAN_EXCESS_VS_BRUTE = 1.02;
static const double MAX_GROUP_EXCESS_VS_BRUTE = 1.15;

static void golden() {
  // Row 0, group 0: codes 0..7 times 2^-7 (the largest magnitude at the -127 end). Group 1: codes 15..8 times
  // -2^-8: the largest value, -109 * -2^-8 = +0.42578125, is reached through a negative scale. Group 2: all zero.
  // Row 1: exact multiples with the largest magnitude at the +109 end (scale +2^-8), then every level once over
  // 16 columns would need G = 16; here codes 8..15 with scale 1.
  const int codes[2][24] = {{0, 1, 2, 3, 4, 5, 6, 7, 15, 14, 13, 12, 11, 10, 9, 8, 8, 8, 8, 8, 8, 8, 8, 8},
                            {15, 9, 3, 8, 12, 7, 1, 14, 8, 9, 10, 11, 12, 13, 14, 15, 7, 7, 7, 7, 7, 7, 7, 0}};
  const float d[2][3] = {{0.0078125f, -0.00390625f, 0.0f}, {0.00390625f, 1.0f, 1.0f}};
  const uint16_t want_s[2][3] = {{0x2000, 0x9C00, 0x0000}, {0x1C00, 0x3C00, 0x3C00}};
  for (int r = 0; r < 2; ++r) {
    float m[24];
    for (int c = 0; c < 24; ++c) m[c] = static_cast<float>(kHq4Codebook[codes[r][c]]) * d[r][c / 8];
    uint8_t q[13];
    uint16_t sc[4];
    q[12] = 0xA5;
    sc[3] = 0x1234;
    qpacked_quantize_row(m, 24, 8, q, sc);
    CHECK(q[12] == 0xA5 && sc[3] == 0x1234, "row %d: bytes past the row's cols/2 and cols/group are not written", r);
    for (int j = 0; j < 12; ++j) {
      const uint8_t want = static_cast<uint8_t>(codes[r][2 * j] | (codes[r][2 * j + 1] << 4));
      CHECK(q[j] == want, "row %d byte %d: got 0x%02X want 0x%02X", r, j, q[j], want);
    }
    for (int g = 0; g < 3; ++g) CHECK(sc[g] == want_s[r][g], "row %d scale %d: got 0x%04X want 0x%04X", r, g, sc[g], want_s[r][g]);
    float back[24];
    qpacked_dequantize_row(q, sc, 24, 8, back);
    for (int c = 0; c < 24; ++c) CHECK(back[c] == m[c], "row %d col %d dequantised to %g, not %g", r, c, back[c], m[c]);
  }
  // The nearest level, ties to the lower one: the midpoint of -8 and 2 is -3.
  CHECK(qpacked_code(-3.0) == 7 && qpacked_code(std::nextafter(-3.0, 0.0)) == 8, "tie at -3 goes to level -8");
  CHECK(qpacked_code(-1e9) == 0 && qpacked_code(1e9) == 15 && qpacked_code(0.0) == 8, "ends and zero");
  CHECK(qpacked_code(96.0) == 14 && qpacked_code(96.5) == 15, "midpoint of 83 and 109 is 96");
}

// The spec read literally: a linear nearest-level search, every candidate, sums in index order.
static void spec_quantize_row(const float * w, int cols, int group, uint8_t * q, uint16_t * scales) {
  auto nearest = [](double t) {
    int best = 0;
    for (int k = 1; k < 16; ++k)
      if (std::fabs(t - kHq4Codebook[k]) < std::fabs(t - kHq4Codebook[best])) best = k;
    return best;
  };
  std::vector<int> u(group), v(group), keep(group);
  for (int g0 = 0; g0 < cols; g0 += group) {
    const float * x = w + g0;
    double m = 0.0;
    for (int c = 0; c < group; ++c)
      if (std::fabs(x[c]) > std::fabs(m)) m = x[c];
    uint16_t best_h = 0;
    std::fill(keep.begin(), keep.end(), 8);
    double best_e = std::numeric_limits<double>::infinity();
    for (int cand : kHq4Candidates) {
      if (m == 0.0) break;
      const double d0 = m / cand;
      double num = 0, den = 0;
      for (int c = 0; c < group; ++c) {
        u[c] = nearest(x[c] / d0);
        num += static_cast<double>(kHq4Codebook[u[c]]) * x[c];
        den += static_cast<double>(kHq4Codebook[u[c]]) * kHq4Codebook[u[c]];
      }
      const uint16_t h = fp16_from_f32(static_cast<float>(num / den));
      const double dh = f32_from_fp16(h);
      double e = 0;
      for (int c = 0; c < group; ++c) {
        v[c] = dh == 0.0 ? 8 : nearest(x[c] / dh);
        e += (kHq4Codebook[v[c]] * dh - x[c]) * (kHq4Codebook[v[c]] * dh - x[c]);
      }
      if (e < best_e) { best_e = e; best_h = h; keep = v; }
    }
    scales[g0 / group] = best_h;
    for (int c = 0; c < group; c += 2) q[(g0 + c) / 2] = static_cast<uint8_t>(keep[c] | (keep[c + 1] << 4));
  }
}

static void matches_spec() {
  test_util::rng r(99);
  const int n = 64;
  std::vector<float> w(n);
  std::vector<uint8_t> a(n / 2), b(n / 2);
  std::vector<uint16_t> sa(n / 16), sb(n / 16);
  int mismatches = 0;
  for (int it = 0; it < 5000; ++it) {
    const float mag = std::ldexp(1.0f, static_cast<int>(it % 60) - 40);
    for (int i = 0; i < n; ++i) {
      w[i] = r.uniform() * mag;
      if (it % 3 == 0) w[i] = std::round(w[i] * 14.0f / mag) * mag / 14.0f;  // repeated values and ties
      if (it % 7 == 0 && i % 5 == 0) w[i] = -w[i] * 4;                        // a heavy tail
    }
    qpacked_quantize_row(w.data(), n, 16, a.data(), sa.data());
    spec_quantize_row(w.data(), n, 16, b.data(), sb.data());
    mismatches += (a != b || sa != sb) ? 1 : 0;
  }
  CHECK(mismatches == 0, "%d of 5000 random rows differ from the literal spec", mismatches);
}

// The midpoint between levels j and j + 1.
static double midpoint(int j) { return (static_cast<double>(kHq4Codebook[j]) + kHq4Codebook[j + 1]) / 2.0; }

// Both searches on group x: whether they agree on the codes, the scale bits and every candidate's refit and error, bit
// for bit (NaN where neither has one). The AVX2 search's codes and scale bits are left in u and h.
static bool searches_agree(const std::vector<float> & x, std::vector<uint8_t> & u, uint16_t & h) {
  const int n = static_cast<int>(x.size());
  std::vector<uint8_t> ua(x.size(), 0xEE);
  u.assign(x.size(), 0xDD);
  uint16_t ha = 0;
  h = 1;
  qpacked_search_trace ta, tb;
  qpacked_search_group_scalar(x.data(), n, ua.data(), &ha, &ta);
  const bool ran = qpacked_search_group_avx2(x.data(), n, u.data(), &h, &tb);
  return ran && ua == u && ha == h && std::memcmp(&ta, &tb, sizeof ta) == 0;
}

// The AVX2 search runs the candidates side by side: the same codes and scale bits as the scalar search and the spec,
// for every group size the packer takes and for the values that steer its branches: ties at the midpoints, zero
// groups, subnormals, scales that round to FP16 zero or overflow it, and (scalar against AVX2 only) inf and NaN.
static void avx2_search_matches_scalar() {
  if (!cpu_kernels_simd()) {
    std::printf("avx2 search: this CPU has no AVX2, only the scalar search was checked\n");
    return;
  }
  test_util::rng r(7);
  const int sizes[] = {2, 6, 8, 10, 16, 32, 64, 128, 264};
  int groups = 0, mismatches = 0, spec_mismatches = 0, zero_scales = 0, skipped_all = 0;
  std::vector<float> x;
  std::vector<uint8_t> ua, ub, us;
  for (int it = 0; it < 6000; ++it) {
    const int n = sizes[it % 9];
    x.assign(static_cast<size_t>(n), 0.0f);
    const int kind = (it / 9) % 8;
    const float mag = std::ldexp(1.0f, static_cast<int>((it * 7) % 50) - 30);
    for (int i = 0; i < n; ++i) {
      const float u = r.uniform();
      switch (kind) {
        case 0: x[i] = u * mag; break;
        case 1: x[i] = std::round(u * 14.0f) * mag / 14.0f; break;                       // repeated values and ties
        case 2: x[i] = static_cast<float>(kHq4Codebook[(it + i * 5) % 16]) * mag; break;  // exact levels
        case 3: x[i] = i == it % n ? mag : 0.0f; break;                                  // one value
        case 4: x[i] = u * 1e-39f; break;                                                // subnormals: scale rounds to 0
        case 5: x[i] = u * 3e38f; break;                                                 // scales past FP16's range
        case 6: x[i] = (i % 3 == 0 ? 100.0f : 1.0f) * u * mag; break;                    // a heavy tail
        default: x[i] = 0.0f; break;                                                     // all zero
      }
    }
    uint16_t hb = 0, hs = 0xFFFF;
    ++groups;
    mismatches += searches_agree(x, ub, hb) ? 0 : 1;
    us.assign(static_cast<size_t>(n / 2), 0);
    std::vector<uint8_t> packed(static_cast<size_t>(n / 2));
    spec_quantize_row(x.data(), n, n, us.data(), &hs);
    for (int j = 0; j < n / 2; ++j) packed[j] = static_cast<uint8_t>(ub[2 * j] | (ub[2 * j + 1] << 4));
    spec_mismatches += (packed != us || hs != hb) ? 1 : 0;
    zero_scales += (hb & 0x7FFF) == 0 && kind != 7 ? 1 : 0;
    skipped_all += kind == 5 && hb == 0 ? 1 : 0;
  }
  CHECK(mismatches == 0, "AVX2 search against scalar: %d of %d groups differ", mismatches, groups);
  CHECK(spec_mismatches == 0, "AVX2 search against the literal spec: %d of %d groups differ", spec_mismatches, groups);
  CHECK(zero_scales > 0 && skipped_all > 0, "the edge cases were reached (%d scales rounded to zero, %d groups past FP16)",
        zero_scales, skipped_all);
  // Values that the winning scale puts exactly on a midpoint (x = midpoint * dh: the code below it, as the spec's
  // strict comparison says). Found as fixed points: put one value there, search again, keep the group when the scale
  // stays.
  int ties = 0, tie_mismatches = 0;
  for (int it = 0; it < 2000 && ties < 200; ++it) {
    const int n = 32;
    x.assign(n, 0.0f);
    for (int i = 0; i < n; ++i) x[i] = r.uniform() * 0.05f;
    uint16_t h = 0;
    ua.assign(n, 0);
    qpacked_search_group_scalar(x.data(), n, ua.data(), &h);
    const int j = it % n;
    const double mid = midpoint(it % 15);
    x[static_cast<size_t>(j)] = static_cast<float>(mid * f32_from_fp16(h));
    uint16_t h2 = 0, hb = 0;
    qpacked_search_group_scalar(x.data(), n, ua.data(), &h2);
    if (h2 != h || static_cast<double>(x[static_cast<size_t>(j)]) / f32_from_fp16(h) != mid) continue;
    ++ties;
    tie_mismatches += searches_agree(x, ub, hb) ? 0 : 1;
  }
  CHECK(ties >= 50, "groups with a value exactly on a midpoint of the winning scale: %d", ties);
  CHECK(tie_mismatches == 0, "AVX2 search against scalar at midpoint ties: %d of %d groups differ", tie_mismatches, ties);
  // Values whose first-pass quotient x / d0 is not a midpoint but rounds to one in float (the AVX2 search compares in
  // float and must take such values to its double comparisons): each group's largest value stays, so d0 = m / c does.
  int near = 0, near_mismatches = 0;
  for (int it = 0; it < 20000 && near < 300; ++it) {
    const int n = 32;
    x.assign(n, 0.0f);
    for (int i = 0; i < n; ++i) x[i] = r.uniform() * 0.05f;
    x[0] = 0.06f;  // the largest, so the values below do not move d0
    const int cand = kHq4Candidates[it % 10];
    const double d0 = 0.06f / static_cast<double>(cand);
    const int j = 1 + (it / 10) % (n - 1);
    const double mid = midpoint(it % 15);
    // The float nearest mid * d0 and its neighbours: the first whose quotient is a witness.
    const float v0 = static_cast<float>(mid * d0);
    const float tries[3] = {v0, std::nextafter(v0, 1.0f), std::nextafter(v0, -1.0f)};
    float v = 0.0f;
    bool found = false;
    for (const float c : tries) {
      const double t = static_cast<double>(c) / d0;
      if (!found && t != mid && static_cast<float>(t) == static_cast<float>(mid) && std::fabs(c) < 0.06f) {
        v = c;
        found = true;
      }
    }
    if (!found) continue;
    x[static_cast<size_t>(j)] = v;
    ++near;
    uint16_t hb = 0;
    near_mismatches += searches_agree(x, ub, hb) ? 0 : 1;
  }
  CHECK(near >= 100, "groups with a value whose quotient rounds in float onto a midpoint: %d", near);
  CHECK(near_mismatches == 0, "AVX2 search against scalar at float-rounded midpoints: %d of %d groups differ", near_mismatches, near);
  // Non-finite values: no spec to follow, but both searches must still agree.
  int nonfinite_mismatches = 0;
  for (int it = 0; it < 400; ++it) {
    const int n = 32;
    x.assign(n, 0.0f);
    for (int i = 0; i < n; ++i) x[i] = r.uniform() * 0.05f;
    const float special[] = {std::numeric_limits<float>::infinity(), -std::numeric_limits<float>::infinity(),
                             std::numeric_limits<float>::quiet_NaN()};
    x[static_cast<size_t>(it % n)] = special[it % 3];
    if (it % 4 == 0) x[static_cast<size_t>((it * 7 + 3) % n)] = special[(it / 3) % 3];
    uint16_t hb = 0;
    nonfinite_mismatches += searches_agree(x, ub, hb) ? 0 : 1;
  }
  CHECK(nonfinite_mismatches == 0, "AVX2 search against scalar with inf and NaN: %d of 400 groups differ", nonfinite_mismatches);
}

// Squared error of group x under FP16 scale bits h with each value at its nearest level.
static double error_at(const float * x, int n, uint16_t h) {
  const double dh = f32_from_fp16(h);
  double e = 0;
  for (int c = 0; c < n; ++c) {
    const double diff = kHq4Codebook[qpacked_code(x[c] / dh)] * dh - x[c];
    e += diff * diff;
  }
  return e;
}

static void near_brute_force() {
  test_util::rng r(2024);
  const int n = 32, groups = 60;
  double sum_ratio = 0, worst = 0;
  for (int g = 0; g < groups; ++g) {
    float x[n];
    for (int c = 0; c < n; ++c) {
      // Gaussian-like (sum of uniforms) for even groups, heavy-tailed (ratio of uniforms) for odd ones.
      const double u = r.uniform() + r.uniform() + r.uniform();
      x[c] = static_cast<float>(g % 2 == 0 ? u * 0.02 : 0.01 * r.uniform() / (0.05 + std::fabs(r.uniform())));
    }
    uint8_t q[n / 2];
    uint16_t sc;
    qpacked_quantize_row(x, n, n, q, &sc);
    float back[n];
    qpacked_dequantize_row(q, &sc, n, n, back);
    double mine = 0;
    for (int c = 0; c < n; ++c) mine += (static_cast<double>(back[c]) - x[c]) * (static_cast<double>(back[c]) - x[c]);
    double best = std::numeric_limits<double>::infinity();
    for (uint32_t h = 1; h < 0x10000; ++h) {
      if ((h & 0x7C00) == 0x7C00 || h == 0x8000) continue;
      best = std::min(best, error_at(x, n, static_cast<uint16_t>(h)));
    }
    CHECK(mine >= best * (1 - 1e-12), "group %d: the quantiser (%g) beat the exhaustive search (%g)", g, mine, best);
    const double ratio = best > 0 ? mine / best : 1.0;
    sum_ratio += ratio;
    worst = std::max(worst, ratio);
  }
  std::printf("quantiser vs brute force over %d groups of %d: mean %.4f, worst %.4f\n", groups, n, sum_ratio / groups, worst);
  CHECK(sum_ratio / groups <= MAX_MEAN_EXCESS_VS_BRUTE, "mean error ratio %.4f", sum_ratio / groups);
  CHECK(worst <= MAX_GROUP_EXCESS_VS_BRUTE, "worst error ratio %.4f", worst);
}

static void fp16_edges() {
  CHECK(fp16_from_f32(1.0f) == 0x3C00, "1.0");
  CHECK(fp16_from_f32(-2.0f) == 0xC000, "-2.0");
  CHECK(fp16_from_f32(65504.0f) == 0x7BFF, "max normal");
  CHECK(fp16_from_f32(65520.0f) == 0x7C00, "tie above max rounds to inf");
  CHECK(fp16_from_f32(std::ldexp(1.0f, -25)) == 0x0000, "half the smallest subnormal ties to even (0)");
  CHECK(fp16_from_f32(std::ldexp(3.0f, -25)) == 0x0002, "1.5 ulp ties to even (2)");
  CHECK(fp16_from_f32(std::ldexp(1.0f, -24)) == 0x0001, "smallest subnormal");
  CHECK(fp16_from_f32(1.0f + std::ldexp(1.0f, -11)) == 0x3C00, "tie between 1 and 1+ulp goes to even");
  CHECK(fp16_from_f32(1.0f + std::ldexp(3.0f, -11)) == 0x3C02, "tie between 1+ulp and 1+2ulp goes to even");
  for (uint32_t h = 0; h < 0x7C00; ++h) {
    CHECK(fp16_from_f32(f32_from_fp16(static_cast<uint16_t>(h))) == h, "round trip of 0x%04X", h);
    if (test_util::g_failures > 10) break;
  }
  CHECK(f32_from_bf16(0x3F80) == 1.0f, "bf16 1.0");
  // Outside the finite range, signs, and the subnormal boundaries.
  const float inf = std::numeric_limits<float>::infinity();
  CHECK(fp16_from_f32(inf) == 0x7C00 && fp16_from_f32(-inf) == 0xFC00, "infinities keep their sign");
  const uint16_t nan_bits = fp16_from_f32(std::numeric_limits<float>::quiet_NaN());
  CHECK((nan_bits & 0x7C00) == 0x7C00 && (nan_bits & 0x3FF) != 0, "NaN stays NaN (0x%04X)", nan_bits);
  CHECK(fp16_from_f32(-std::numeric_limits<float>::quiet_NaN()) & 0x8000, "NaN keeps its sign");
  CHECK(fp16_from_f32(1e10f) == 0x7C00 && fp16_from_f32(-1e10f) == 0xFC00, "overflow to signed infinity");
  CHECK(fp16_from_f32(65519.0f) == 0x7BFF, "just below the tie above max rounds down");
  CHECK(fp16_from_f32(-0.0f) == 0x8000 && fp16_from_f32(-std::ldexp(1.0f, -30)) == 0x8000, "negative zero and underflow");
  CHECK(fp16_from_f32(std::nextafter(std::ldexp(1.0f, -25), 1.0f)) == 0x0001, "just above half the smallest subnormal");
  CHECK(fp16_from_f32(std::ldexp(1.5f, -26)) == 0x0000, "below half the smallest subnormal");
  CHECK(fp16_from_f32(-std::ldexp(3.0f, -24)) == 0x8003, "negative subnormal");
  CHECK(fp16_from_f32(std::ldexp(1023.5f, -24)) == 0x0400, "largest subnormal tie carries into the smallest normal");
  CHECK(fp16_from_f32(std::ldexp(1.0f, -14)) == 0x0400, "smallest normal");
  CHECK(fp16_from_f32(std::ldexp(1.0f, 15)) == 0x7800, "2^15");
  CHECK(f32_from_fp16(0x7C00) == inf && f32_from_fp16(0xFC00) == -inf, "binary16 infinities");
  CHECK(std::isnan(f32_from_fp16(0x7E00)) && std::isnan(f32_from_fp16(0x7C01)), "binary16 NaNs");
  CHECK(f32_from_fp16(0x8001) == -std::ldexp(1.0f, -24) && f32_from_fp16(0x83FF) == -std::ldexp(1023.0f, -24), "negative subnormals");
  CHECK(std::signbit(f32_from_fp16(0x8000)) && f32_from_fp16(0x8000) == 0.0f, "negative zero");
  CHECK(f32_from_fp16(0xC000) == -2.0f && f32_from_fp16(0x7BFF) == 65504.0f, "normals");
}

static void dot_kernels() {
  test_util::rng r(7);
  for (int group : {8, 16, 32, 64}) {
    const int n = 256;
    std::vector<float> w(n), x(n), back(n);
    std::vector<uint8_t> q(n / 2);
    std::vector<uint16_t> sc(n / group);
    for (int i = 0; i < n; ++i) { w[i] = r.uniform() * (1 + i % 5); x[i] = r.uniform(); }
    qpacked_quantize_row(w.data(), n, group, q.data(), sc.data());
    qpacked_dequantize_row(q.data(), sc.data(), n, group, back.data());
    double ref = 0, mag = 1e-6;
    for (int i = 0; i < n; ++i) { ref += static_cast<double>(back[i]) * x[i]; mag += std::fabs(back[i] * x[i]); }
    for (bool simd : {false, true}) {
      cpu_kernels_set_simd(simd);
      const float got = cpu_dot_q4(q.data(), sc.data(), n, group, x.data());
      CHECK(std::fabs(got - ref) / mag <= MAX_REL_ERR_Q4_DOT, "group %d simd %d: %g vs %g", group, simd ? 1 : 0, got, ref);
    }
    // F16 and BF16 row dots share the reduction; check them against double sums too.
    std::vector<uint16_t> h(n), b(n);
    double ref_h = 0, ref_b = 0;
    for (int i = 0; i < n; ++i) {
      h[i] = fp16_from_f32(w[i]);
      b[i] = test_util::bf16_from_f32(w[i]);
      ref_h += static_cast<double>(f32_from_fp16(h[i])) * x[i];
      ref_b += static_cast<double>(f32_from_bf16(b[i])) * x[i];
    }
    for (bool simd : {false, true}) {
      cpu_kernels_set_simd(simd);
      CHECK(std::fabs(cpu_dot_f16(h.data(), x.data(), n) - ref_h) < 1e-3, "f16 dot simd %d", simd ? 1 : 0);
      CHECK(std::fabs(cpu_dot_bf16(b.data(), x.data(), n) - ref_b) < 1e-3, "bf16 dot simd %d", simd ? 1 : 0);
    }
  }
  cpu_kernels_set_simd(true);
  CHECK(qpacked_default_group_size(2048, 1024) == 32, "OLMoE widths -> 32");
  CHECK(qpacked_default_group_size(96, 32) == 32, "96/32 -> 32");
  CHECK(qpacked_default_group_size(24, 24) == 8, "24 -> 8");
  CHECK(qpacked_is_expert_weight("model.layers.3.mlp.experts.12.down_proj.weight"), "expert name");
  CHECK(!qpacked_is_expert_weight("model.layers.3.mlp.gate.weight"), "router is not an expert");
  CHECK(qpacked_is_expert_weight("model.layers.0.mlp.experts.0.gate_proj.weight") &&
            qpacked_is_expert_weight("model.layers.0.mlp.experts.7.up_proj.weight"),
        "gate and up expert names");
  CHECK(!qpacked_is_expert_weight("model.layers.0.mlp.experts.0.gate_proj.qweight") &&
            !qpacked_is_expert_weight("model.layers.0.mlp.experts.0.up_proj.weight.bak") &&
            !qpacked_is_expert_weight("model.layers.0.self_attn.q_proj.weight") &&
            !qpacked_is_expert_weight("x.model.layers.0.mlp.experts.0.gate_proj.weight"),
        "packed tensors, other suffixes, attention and other prefixes are not expert matrices");
  CHECK(qpacked_default_group_size(64, 128) == 32 && qpacked_default_group_size(16, 48) == 16, "largest common group");
  CHECK(qpacked_default_group_size(12, 16) == 0 && qpacked_default_group_size(8, 4) == 0, "no group of 32..8 divides");
}

int main() {
  golden();
  matches_spec();
  near_brute_force();
  avx2_search_matches_scalar();
  fp16_edges();
  dot_kernels();
  std::printf("simd available: %d\n", cpu_kernels_simd() ? 1 : 0);
  return test_util::finish("test-qpacked");
}
