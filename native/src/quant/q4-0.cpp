#include "quant/q4-0.h"

#include <algorithm>
#include <cmath>

#include "quant/qpacked.h"

namespace rt {

q4_0_block q4_0_quantize_block(const float * x) {
  float amax = 0.0f;
  float max = 0.0f;
  for (int j = 0; j < kQ4_0Block; ++j) {
    if (amax < std::fabs(x[j])) {
      amax = std::fabs(x[j]);
      max = x[j];
    }
  }
  const float d = max / -8.0f;
  const float id = d != 0.0f ? 1.0f / d : 0.0f;
  q4_0_block b;
  b.d = fp16_from_f32(d);
  for (int j = 0; j < kQ4_0Block; ++j) {
    const float scaled = x[j] * id;
    b.q[j] = static_cast<uint8_t>(std::min(15, static_cast<int>(scaled + 8.5f)));
  }
  return b;
}

void q4_0_round_trip(const float * x, int64_t n, float * out) {
  for (int64_t i = 0; i + kQ4_0Block <= n; i += kQ4_0Block) {
    const q4_0_block b = q4_0_quantize_block(x + i);
    const float d = f32_from_fp16(b.d);
    for (int j = 0; j < kQ4_0Block; ++j) out[i + j] = static_cast<float>(static_cast<int>(b.q[j]) - 8) * d;
  }
}

}  // namespace rt
