#include "quant/qpacked.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "cpu/cpu-kernels.h"
#include "quant/qpacked-search.h"

namespace rt {

uint16_t fp16_from_f32(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  const uint32_t sign = (x >> 16) & 0x8000u;
  const uint32_t exp = (x >> 23) & 0xffu;
  uint32_t mant = x & 0x7fffffu;
  if (exp == 0xff) return static_cast<uint16_t>(sign | 0x7c00u | (mant ? 0x200u : 0u));
  const int e = static_cast<int>(exp) - 127 + 15;
  if (e >= 31) return static_cast<uint16_t>(sign | 0x7c00u);
  if (e <= 0) {
    if (e < -10) return static_cast<uint16_t>(sign);  // below half the smallest subnormal: rounds to zero
    mant |= 0x800000u;
    const int shift = 14 - e;  // 24-bit significand -> subnormal field
    uint32_t h = mant >> shift;
    const uint32_t rem = mant & ((1u << shift) - 1u);
    const uint32_t half = 1u << (shift - 1);
    if (rem > half || (rem == half && (h & 1u))) ++h;
    return static_cast<uint16_t>(sign | h);
  }
  uint32_t h = (static_cast<uint32_t>(e) << 10) | (mant >> 13);
  const uint32_t rem = mant & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (h & 1u))) ++h;  // a carry into the exponent is the correct result
  return static_cast<uint16_t>(sign | h);
}

float f32_from_fp16(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exp = (h >> 10) & 0x1fu;
  const uint32_t mant = h & 0x3ffu;
  uint32_t x;
  if (exp == 0) {
    if (mant == 0) {
      x = sign;
    } else {
      float v = std::ldexp(static_cast<float>(mant), -24);
      return sign ? -v : v;
    }
  } else if (exp == 31) {
    x = sign | 0x7f800000u | (mant << 13);
  } else {
    x = sign | ((exp - 15 + 127) << 23) | (mant << 13);
  }
  float f;
  std::memcpy(&f, &x, 4);
  return f;
}

int qpacked_default_group_size(int in_a, int in_b) {
  for (int g : {32, 16, 8}) {
    if (in_a % g == 0 && in_b % g == 0) return g;
  }
  return 0;
}

namespace {

struct codebook_midpoints {
  double mid[15];
  codebook_midpoints() {
    for (int j = 0; j < 15; ++j) mid[j] = (static_cast<double>(kHq4Codebook[j]) + kHq4Codebook[j + 1]) / 2.0;
  }
};
const codebook_midpoints g_mid;

// The number of midpoints strictly below t (a branch-free binary search over the 15 sorted midpoints).
inline int code_of(double t) {
  int k = g_mid.mid[7] < t ? 8 : 0;
  k += g_mid.mid[k + 3] < t ? 4 : 0;
  k += g_mid.mid[k + 1] < t ? 2 : 0;
  k += g_mid.mid[k] < t ? 1 : 0;
  return k;
}

}  // namespace

int qpacked_code(double t) { return code_of(t); }

void qpacked_search_trace::clear() {
  std::fill(d1, d1 + 10, std::numeric_limits<double>::quiet_NaN());
  std::fill(err, err + 10, std::numeric_limits<double>::quiet_NaN());
}

void qpacked_search_group_scalar(const float * x, int group, uint8_t * best, uint16_t * h_out, qpacked_search_trace * trace) {
  if (trace != nullptr) trace->clear();
  const double m = x[qpacked_largest_index(x, group)];
  // Each candidate's codes; the best so far are kept in the caller's `best`.
  uint8_t small[256];
  std::vector<uint8_t> big;
  if (group > 256) big.resize(static_cast<size_t>(group));
  uint8_t * u = group > 256 ? big.data() : small;
  uint16_t best_h = 0;
  std::fill(best, best + group, static_cast<uint8_t>(8));
  if (m != 0.0) {
    double best_e = 0.0;
    bool have = false;
    for (int ci = 0; ci < 10; ++ci) {
      const double d0 = m / kHq4Candidates[ci];
      double num = 0.0, den = 0.0;
      for (int c = 0; c < group; ++c) {
        const double k = kHq4Codebook[code_of(x[c] / d0)];
        num += k * x[c];
        den += k * k;
      }
      const double d1 = den > 0.0 ? num / den : d0;
      if (trace != nullptr) trace->d1[ci] = d1;
      const uint16_t h = fp16_from_f32(static_cast<float>(d1));
      const double dh = f32_from_fp16(h);
      if (!std::isfinite(dh)) continue;
      double e = 0.0;
      for (int c = 0; c < group; ++c) {
        const int v = dh == 0.0 ? 8 : code_of(x[c] / dh);
        u[c] = static_cast<uint8_t>(v);
        const double diff = kHq4Codebook[v] * dh - x[c];
        e += diff * diff;
      }
      if (trace != nullptr) trace->err[ci] = e;
      if (!have || e < best_e) {
        have = true;
        best_e = e;
        best_h = h;
        std::copy(u, u + group, best);
      }
    }
  }
  *h_out = best_h;
}

void qpacked_quantize_row(const float * w, int cols, int group, uint8_t * qweight, uint16_t * scales) {
  std::vector<uint8_t> chunk(static_cast<size_t>(group));
  const bool simd = cpu_kernels_simd();
  for (int g0 = 0; g0 < cols; g0 += group) {
    uint8_t * best = chunk.data();
    uint16_t * h = scales + g0 / group;
    if (!(simd && qpacked_search_group_avx2(w + g0, group, best, h))) qpacked_search_group_scalar(w + g0, group, best, h);
    uint8_t * out = qweight + g0 / 2;
    for (int j = 0; j < group / 2; ++j) out[j] = static_cast<uint8_t>(best[2 * j] | (best[2 * j + 1] << 4));
  }
}

void qpacked_dequantize_row(const uint8_t * qweight, const uint16_t * scales, int cols, int group, float * out) {
  for (int c = 0; c < cols; c += 2) {
    const float scale = f32_from_fp16(scales[c / group]);
    const uint8_t b = qweight[c / 2];
    out[c] = static_cast<float>(kHq4Codebook[b & 0xf]) * scale;
    out[c + 1] = static_cast<float>(kHq4Codebook[b >> 4]) * scale;
  }
}

bool qpacked_is_expert_weight(const std::string & name) {
  static const char * suffixes[] = {".gate_proj.weight", ".up_proj.weight", ".down_proj.weight"};
  if (name.rfind("model.layers.", 0) != 0 || name.find(".mlp.experts.") == std::string::npos) return false;
  for (const char * s : suffixes) {
    const size_t n = std::strlen(s);
    if (name.size() > n && name.compare(name.size() - n, n, s) == 0) return true;
  }
  return false;
}

}  // namespace rt
