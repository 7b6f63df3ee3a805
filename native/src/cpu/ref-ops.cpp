#include "cpu/ref-ops.h"

#include <cmath>
#include <cstring>

#include "quant/qpacked.h"

namespace rt::ref {

float half_to_float(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exp = (h >> 10) & 0x1Fu;
  const uint32_t man = h & 0x3FFu;
  float f;
  if (exp == 0) {
    f = std::ldexp(static_cast<float>(man), -24);
  } else if (exp == 31) {
    f = man == 0 ? INFINITY : NAN;
  } else {
    f = std::ldexp(static_cast<float>(man | 0x400u), static_cast<int>(exp) - 25);
  }
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  bits |= sign;
  std::memcpy(&f, &bits, 4);
  return f;
}

uint16_t float_to_half(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  const uint16_t sign = static_cast<uint16_t>((x >> 16) & 0x8000u);
  const uint32_t abs = x & 0x7FFFFFFFu;
  if (abs >= 0x7F800000u) return static_cast<uint16_t>(sign | (abs > 0x7F800000u ? 0x7E00u : 0x7C00u));
  if (abs >= 0x477FF000u) return static_cast<uint16_t>(sign | 0x7C00u);  // rounds past 65504
  if (abs < 0x38800000u) {  // subnormal or zero in binary16
    float a;
    std::memcpy(&a, &abs, 4);
    const float scaled = a * 16777216.0f;  // units of 2^-24; exact, then round half to even
    return static_cast<uint16_t>(sign | static_cast<uint16_t>(std::nearbyint(scaled)));
  }
  const uint32_t mant = abs & 0x7FFFFFu;
  const uint32_t exp = (abs >> 23) - 112;
  uint32_t h = (exp << 10) | (mant >> 13);
  const uint32_t rest = mant & 0x1FFFu;
  if (rest > 0x1000u || (rest == 0x1000u && (h & 1u))) ++h;
  return static_cast<uint16_t>(sign | h);
}

void matmul_w4a16(const float * x, int n_tokens, const uint8_t * qweight, const uint16_t * scales, int rows, int cols,
                  int group_size, float * y) {
  const int gpr = cols / group_size;
  for (int t = 0; t < n_tokens; ++t) {
    for (int r = 0; r < rows; ++r) {
      float acc = 0.0f;
      for (int g = 0; g < gpr; ++g) {
        float part = 0.0f;
        for (int c = g * group_size; c < (g + 1) * group_size; ++c) {
          const uint8_t b = qweight[static_cast<size_t>(r) * (cols / 2) + c / 2];
          const int u = (c & 1) ? (b >> 4) : (b & 0xF);
          part += static_cast<float>(kHq4Codebook[u]) * x[static_cast<size_t>(t) * cols + c];
        }
        acc += part * half_to_float(scales[static_cast<size_t>(r) * gpr + g]);
      }
      y[static_cast<size_t>(t) * rows + r] = acc;
    }
  }
}

void matmul_f16(const float * x, int n_tokens, const uint16_t * w, int rows, int cols, float * y) {
  for (int t = 0; t < n_tokens; ++t) {
    for (int r = 0; r < rows; ++r) {
      float acc = 0.0f;
      for (int c = 0; c < cols; ++c) {
        acc += half_to_float(w[static_cast<size_t>(r) * cols + c]) * x[static_cast<size_t>(t) * cols + c];
      }
      y[static_cast<size_t>(t) * rows + r] = acc;
    }
  }
}

void rmsnorm(const float * x, const float * w, float eps, int n, float * y) {
  float ss = 0.0f;
  for (int i = 0; i < n; ++i) ss += x[i] * x[i];
  const float inv = 1.0f / std::sqrt(ss / static_cast<float>(n) + eps);
  for (int i = 0; i < n; ++i) y[i] = x[i] * inv * w[i];
}

void rope(float * x, int n_heads, int head_dim, int pos, float theta) {
  const int half = head_dim / 2;
  for (int i = 0; i < half; ++i) {
    const float inv_freq = 1.0f / std::pow(theta, static_cast<float>(2 * i) / static_cast<float>(head_dim));
    const float angle = static_cast<float>(pos) * inv_freq;
    const float c = std::cos(angle);
    const float s = std::sin(angle);
    for (int h = 0; h < n_heads; ++h) {
      float * head = x + h * head_dim;
      const float x1 = head[i];
      const float x2 = head[i + half];
      head[i] = x1 * c - x2 * s;
      head[i + half] = x2 * c + x1 * s;
    }
  }
}

void attention_head(const float * q, const float * keys, const float * values, int n, int ld, int head_dim,
                    float * out) {
  std::vector<float> s(static_cast<size_t>(n));
  const float scale = 1.0f / std::sqrt(static_cast<float>(head_dim));
  float m = -INFINITY;
  for (int j = 0; j < n; ++j) {
    float d = 0.0f;
    for (int i = 0; i < head_dim; ++i) d += q[i] * keys[static_cast<size_t>(j) * ld + i];
    s[static_cast<size_t>(j)] = d * scale;
    m = std::fmax(m, s[static_cast<size_t>(j)]);
  }
  float total = 0.0f;
  for (float & v : s) {
    v = std::exp(v - m);
    total += v;
  }
  for (int i = 0; i < head_dim; ++i) {
    float acc = 0.0f;
    for (int j = 0; j < n; ++j) acc += s[static_cast<size_t>(j)] * values[static_cast<size_t>(j) * ld + i];
    out[i] = acc / total;
  }
}

void router_topk(const float * logits, int n_experts, int k, bool norm, int * ids, float * weights) {
  std::vector<float> p(static_cast<size_t>(n_experts));
  float m = -INFINITY;
  for (int e = 0; e < n_experts; ++e) m = std::fmax(m, logits[e]);
  float total = 0.0f;
  for (int e = 0; e < n_experts; ++e) {
    p[static_cast<size_t>(e)] = std::exp(logits[e] - m);
    total += p[static_cast<size_t>(e)];
  }
  for (float & v : p) v /= total;
  float picked = 0.0f;
  for (int j = 0; j < k; ++j) {
    int best = -1;
    for (int e = 0; e < n_experts; ++e) {
      if (p[static_cast<size_t>(e)] < 0.0f) continue;
      if (best < 0 || p[static_cast<size_t>(e)] > p[static_cast<size_t>(best)]) best = e;
    }
    ids[j] = best;
    weights[j] = p[static_cast<size_t>(best)];
    picked += weights[j];
    p[static_cast<size_t>(best)] = -1.0f;
  }
  if (norm) {
    for (int j = 0; j < k; ++j) weights[j] /= picked;
  }
}

void swiglu(const float * gate, const float * up, int n, float * out) {
  for (int i = 0; i < n; ++i) out[i] = gate[i] / (1.0f + std::exp(-gate[i])) * up[i];
}

int argmax(const float * x, int n) {
  int best = 0;
  for (int i = 0; i < n; ++i) {
    if (std::isnan(x[i])) return -1;
    if (x[i] > x[best]) best = i;
  }
  return best;
}

}  // namespace rt::ref
