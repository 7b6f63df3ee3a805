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
//
// llama.cpp multiplies Q4_0 weights by 8-bit activations (Q8_0 on the CPU, Q8_1's same values on CUDA), so the check
// rounds the experts' inputs as well. One block of 32 (ggml's quantize_row_q8_0_ref, then dequantize_row_q8_0):
//   amax = max |x_i|;  d = amax / 127;  id = d != 0 ? 1 / d : 0;  q_i = roundf(x_i * id)  (half away from zero)
//   dequantised: q_i * float(fp16(d))
// ggml's x86 quantiser takes id = 127 / amax and rounds ties to even, and CUDA's divides by d: they part from this
// only on exact ties and in the last bit of id. ggml sums each block's integer products, then scales; the check's
// float dot of the two dequantised rows differs from that only in float rounding.
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

/** out[i] = the value Q8_0 stores for x[i], for n a multiple of 32 (out may be x). */
void q8_0_round_trip(const float * x, int64_t n, float * out);

}  // namespace rt
