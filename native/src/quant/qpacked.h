#pragma once
// qpacked-v2: the 4-bit layout of routed OLMoE experts (the TS reference packer, the CPU and the CUDA kernels follow
// the same bytes).
//
// Folder: config.json and tokenizer files copied byte for byte, model-qpacked-XXXXX-of-YYYYY.safetensors shards,
// model.safetensors.index.json (HF weight_map), horizon-manifest.json written last (temp + rename).
// Shard __metadata__: {"format": "qpacked-v2", "group_size": "<G>", "codebook": "hq4nl"}. qpacked-v2 folders (uniform
// INT4, scale amax/7, G = 128) are refused with a message to re-pack.
//
// Non-routed tensors (embeddings, norms, attention, router mlp.gate, lm_head): same name, dtype F16, round to
// nearest even from the source value.
// Routed expert matrix model.layers.L.mlp.experts.E.{gate,up,down}_proj.weight of shape [out, in] becomes
//   ...{proj}.qweight  U8  [out, in/2]     4-bit codes u (0..15)
//   ...{proj}.scales   F16 [out, in/G]     signed scale d per group
// G = 32 when it divides every expert `in`, else 16 or 8; an override must divide and be even. 4 bits a weight + 16
// bits per G weights: 4.5 bits a weight at G = 32 (llama.cpp's Q4_0 spends the same).
//
// Dequantised: w' = K[u] * d, K the fixed codebook kHq4Codebook below (16 integers in [-127, 109], non-uniform:
// denser near zero, fitted by weighted Lloyd iterations to group-normalised Gaussian and Student-t(4) weights). Against
// Q4_0 on the same weights its RMS error is 0.85x (Gaussian) and 0.74x (Student-t, df 4).
//
// Quantisation of one (row, group) x[0..G), float32 values (exact from BF16); all arithmetic below is IEEE double
// unless marked, evaluated in the written order (the TS reference reproduces it bit for bit):
//   m     = x[i*], i* the first index of the largest |x[i]|; if m == 0: every u = 8, d = +0.
//   code(t) = the k minimising |t - K[k]|: k = number of midpoints (K[j] + K[j+1]) / 2 strictly below t.
//   for each candidate c in kHq4Candidates (in order):
//     d0 = m / c; u_i = code(x_i / d0)
//     d1 = (sum_i K[u_i] * x_i) / (sum_i K[u_i]^2)          (sums in index order; d1 = d0 if the denominator is 0)
//     h  = fp16_rne(float32(d1)); dh = value of h
//     v_i = code(x_i / dh) (v_i = 8 when dh == 0); E = sum_i (K[v_i] * dh - x_i)^2
//     keep (h, v) when E is strictly below the best E so far.
//
// Byte layout of qweight row r (in/2 bytes):
//   byte j = (u[r][2j+1] << 4) | u[r][2j]            (column 2j in the LOW nibble, 2j+1 in the HIGH nibble)
//   scales[r][g] covers columns g*G .. g*G+G-1.
// A shard's tensors tile its data (no gaps), so every qweight holds an even number of bytes (out * in/2 even) to keep
// the F16 tensors after it 2-byte aligned; the packer refuses an expert matrix that would not (none of a model whose
// shapes match its config: in is a multiple of the even G, and out is even for OLMoE).
#include <cstddef>
#include <cstdint>
#include <string>

namespace rt {

/** The format name written to and required in every packed shard's __metadata__. */
constexpr const char * kQpackedFormat = "qpacked-v2";
/** The name of the codebook below, recorded beside the format. */
constexpr const char * kQpackedCodebook = "hq4nl";
/** The 16 levels of a 4-bit code (dequantised weight = level * group scale). */
/** The levels as a list, for tables of other element types (the CUDA kernels' float table). */
#define RT_HQ4_LEVELS -127, -100, -78, -61, -45, -32, -19, -8, 2, 12, 22, 35, 48, 64, 83, 109
constexpr int8_t kHq4Codebook[16] = {RT_HQ4_LEVELS};
/** Divisors of the group's largest-magnitude value tried as first scales (both ends of the codebook). */
constexpr int kHq4Candidates[10] = {-136, -128, -120, -112, -104, 96, 104, 112, 120, 128};

/** IEEE binary16 bits from a float, round to nearest even (subnormals, inf and NaN handled). */
uint16_t fp16_from_f32(float f);
/** Exact float value of binary16 bits. */
float f32_from_fp16(uint16_t h);
/** Exact float value of bfloat16 bits. */
inline float f32_from_bf16(uint16_t h) {
  union { uint32_t u; float f; } v;
  v.u = static_cast<uint32_t>(h) << 16;
  return v.f;
}

/** Default group size for expert input widths `in_a`, `in_b` (gate/up in, down in); 0 if none of 32, 16, 8 divides. */
int qpacked_default_group_size(int in_a, int in_b);

/** The codebook index nearest to t (ties to the lower level), as the quantiser assigns it. */
int qpacked_code(double t);

/**
 * Quantises one row of `cols` float32 values (cols % group == 0, group even) into cols/2 bytes and cols/group
 * FP16 scale bits, exactly as specified above.
 */
void qpacked_quantize_row(const float * w, int cols, int group, uint8_t * qweight, uint16_t * scales);

/** Dequantises one packed row back to float32 (the reference unpack): K[u] * d. */
void qpacked_dequantize_row(const uint8_t * qweight, const uint16_t * scales, int cols, int group, float * out);

/** True when `name` is a routed expert matrix (model.layers.L.mlp.experts.E.{gate,up,down}_proj.weight). */
bool qpacked_is_expert_weight(const std::string & name);

}  // namespace rt
