// qpacked-v1 golden bytes (hand-computed from the spec in src/quant/qpacked.h), FP16 rounding edge cases, and the
// CPU INT4 dot kernels (AVX2 and scalar) against the reference unpack. To add a golden case, append a row to the
// matrix below and its hand-computed bytes/scales.
#include <algorithm>
#include <cstring>
#include <limits>

#include "cpu/cpu-kernels.h"
#include "quant/qpacked.h"
#include "test-helpers.h"

using namespace rt;

/** |kernel - reference| / (sum |w'*x| + 1e-6) for the INT4 dot kernels. */
static const float MAX_REL_ERR_Q4_DOT = 1e-5f;

static void golden() {
  const float s = std::ldexp(1.0f, -24);  // smallest FP16 subnormal
  const float m[2][16] = {
      // group 0: amax 7 -> scale 1 exactly; ties at .5 round away from zero. group 1: all zero -> scale 0.
      {7, -7, 0.5f, -0.5f, 1.5f, 2.5f, -2.5f, 3, 0, 0, 0, 0, 0, 0, 0, 0},
      // group 0: amax 10*s -> scale rounds to 1*s, so -10 clamps to -8 and 9 to 7. group 1: amax 1 -> scale 0x3092.
      {-10 * s, 9 * s, 2.5f * s, -2.5f * s, 3 * s, 0, 1 * s, -1 * s, 1, -1, 0.5f, 0.25f, 0, -0.5f, 0.125f, -0.0625f}};
  const uint8_t want_q[2][8] = {{0x1F, 0x79, 0xBA, 0xB5, 0x88, 0x88, 0x88, 0x88},
                                {0xF0, 0x5B, 0x8B, 0x79, 0x1F, 0xAC, 0x48, 0x89}};
  const uint16_t want_s[2][2] = {{0x3C00, 0x0000}, {0x0001, 0x3092}};
  for (int r = 0; r < 2; ++r) {
    uint8_t q[9];
    uint16_t sc[3];
    q[8] = 0xA5;
    sc[2] = 0x1234;
    qpacked_quantize_row(m[r], 16, 8, q, sc);
    CHECK(q[8] == 0xA5 && sc[2] == 0x1234, "row %d: bytes past the row's cols/2 and cols/group are not written", r);
    for (int j = 0; j < 8; ++j) CHECK(q[j] == want_q[r][j], "row %d byte %d: got 0x%02X want 0x%02X", r, j, q[j], want_q[r][j]);
    for (int g = 0; g < 2; ++g) CHECK(sc[g] == want_s[r][g], "row %d scale %d: got 0x%04X want 0x%04X", r, g, sc[g], want_s[r][g]);
    float back[16];
    qpacked_dequantize_row(q, sc, 16, 8, back);
    if (r == 0) {
      const float want_back[8] = {7, -7, 1, -1, 2, 3, -3, 3};
      for (int c = 0; c < 8; ++c) CHECK(back[c] == want_back[c], "row 0 col %d dequantised to %g", c, back[c]);
      for (int c = 8; c < 16; ++c) CHECK(back[c] == 0.0f, "zero group col %d dequantised to %g", c, back[c]);
    } else {
      CHECK(back[0] == -8 * s, "clamped -8 dequantised to %g", back[0]);
      CHECK(back[8] == 7 * 0.142822265625f, "col 8 dequantised to %g", back[8]);
    }
  }
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
  for (int group : {8, 16, 32, 128}) {
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
  CHECK(qpacked_default_group_size(2048, 1024) == 128, "OLMoE widths -> 128");
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
  CHECK(qpacked_default_group_size(64, 128) == 64 && qpacked_default_group_size(16, 48) == 16, "largest common group");
  CHECK(qpacked_default_group_size(12, 16) == 0 && qpacked_default_group_size(8, 4) == 0, "no group of 128..8 divides");
}

// The spec read literally (std::round = half away from zero), to check the vectorisable quantiser against.
static void spec_quantize_row(const float * w, int cols, int group, uint8_t * q, uint16_t * scales) {
  for (int g0 = 0; g0 < cols; g0 += group) {
    float amax = 0.0f;
    for (int c = g0; c < g0 + group; ++c) amax = std::fmax(amax, std::fabs(w[c]));
    scales[g0 / group] = fp16_from_f32(amax / 7.0f);
    const float scale = f32_from_fp16(scales[g0 / group]);
    for (int c = g0; c < g0 + group; c += 2) {
      int u[2];
      for (int k = 0; k < 2; ++k) {
        const int v = scale == 0.0f ? 0 : static_cast<int>(std::round(w[c + k] / scale));
        u[k] = std::min(7, std::max(-8, v)) + 8;
      }
      q[c / 2] = static_cast<uint8_t>(u[0] | (u[1] << 4));
    }
  }
}

static void matches_spec() {
  test_util::rng r(99);
  const int n = 64;
  std::vector<float> w(n);
  std::vector<uint8_t> a(n / 2), b(n / 2);
  std::vector<uint16_t> sa(n / 16), sb(n / 16);
  int mismatches = 0;
  for (int it = 0; it < 20000; ++it) {
    const float mag = std::ldexp(1.0f, static_cast<int>(it % 60) - 40);
    for (int i = 0; i < n; ++i) {
      w[i] = r.uniform() * mag;
      if (it % 3 == 0) w[i] = std::round(w[i] * 14.0f / mag) * mag / 14.0f;  // many exact .5 multiples of the scale
    }
    qpacked_quantize_row(w.data(), n, 16, a.data(), sa.data());
    spec_quantize_row(w.data(), n, 16, b.data(), sb.data());
    mismatches += (a != b || sa != sb) ? 1 : 0;
  }
  CHECK(mismatches == 0, "%d of 20000 random rows differ from the literal spec", mismatches);
}

int main() {
  golden();
  matches_spec();
  fp16_edges();
  dot_kernels();
  std::printf("simd available: %d\n", cpu_kernels_simd() ? 1 : 0);
  return test_util::finish("test-qpacked");
}
