#pragma once
// llama.cpp's Q4_0, the 4-bit format a llama.cpp user runs OLMoE's experts in, for the quality check's point of
// comparison: the INT4-vs-BF16 check also runs the BF16 experts rounded as Q4_0 rounds them, on the same tokens.
//
// One block of 32 float values x (ggml's quantize_row_q4_0_ref, then dequantize_row_q4_0), in float32 arithmetic:
//   max = x[i*], i* the first index of the largest |x[i]|;  d = max / -8;  id = d != 0 ? 1 / d : 0
//   q_i = min(15, trunc(x_i * id + 8.5))   (x_i * id lies in [-8, 8], so the sum is at least 0.5)
//   stored: fp16_rne(d) and q;  dequantised: (q_i - 8) * float(fp16(d))
// id comes from d before its FP16 rounding, as in ggml. The multiply and the add round separately (this file is built
// without FMA contraction: -march=x86-64-v2 has no FMA).
#include <cstdint>

namespace rt {

constexpr int kQ4_0Block = 32;

/** One Q4_0 block: the scale's FP16 bits and the 32 codes (0..15), in ggml's element order. */
struct q4_0_block {
  uint16_t d;
  uint8_t q[kQ4_0Block];
};

/** Quantises x[0..32) as ggml's reference quantiser does. */
q4_0_block q4_0_quantize_block(const float * x);

/**
 * out[i] = the value Q4_0 stores for x[i], for n a multiple of 32 (out may be x); on the AVX2 path when the CPU
 * kernels take it, with the same values as the scalar one.
 */
void q4_0_round_trip(const float * x, int64_t n, float * out);

}  // namespace rt
