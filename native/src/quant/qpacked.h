#pragma once
// qpacked-v1: the INT4 layout of routed OLMoE experts (fixed by the lead; the TS reference packer and the CUDA
// kernels follow the same bytes).
//
// Folder: config.json and tokenizer files copied byte for byte, model-qpacked-XXXXX-of-YYYYY.safetensors shards,
// model.safetensors.index.json (HF weight_map), horizon-manifest.json written last (temp + rename).
// Shard __metadata__: {"format": "qpacked-v1", "group_size": "<G>"}.
//
// Non-routed tensors (embeddings, norms, attention, router mlp.gate, lm_head): same name, dtype F16, round to
// nearest even from the source value.
// Routed expert matrix model.layers.L.mlp.experts.E.{gate,up,down}_proj.weight of shape [out, in] becomes
//   ...{proj}.qweight  U8  [out, in/2]
//   ...{proj}.scales   F16 [out, in/G]
// G = 128 when it divides every expert `in`, else the largest of 64, 32, 16, 8 that does; an override must divide
// and be even.
//
// Quantisation of one (row, group), w = float32 (exact from BF16):
//   amax  = max |w|
//   scale = fp16_rne(amax / 7)                       (float32 division, then round-to-nearest-even to FP16)
//   q     = 0 if scale == 0 else clamp(round_half_away_from_zero(w / float(scale)), -8, 7)   (float32 division)
//   u     = q + 8                                    (0..15)
// Dequantised: w' = (u - 8) * scale.
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

/** Default group size for expert input widths `in_a`, `in_b` (gate/up in, down in); 0 if none of 128..8 divides. */
int qpacked_default_group_size(int in_a, int in_b);

/**
 * Quantises one row of `cols` float32 values (cols % group == 0, group even) into cols/2 bytes and cols/group
 * FP16 scale bits, exactly as specified above.
 */
void qpacked_quantize_row(const float * w, int cols, int group, uint8_t * qweight, uint16_t * scales);

/** Dequantises one packed row back to float32 (the reference unpack). */
void qpacked_dequantize_row(const uint8_t * qweight, const uint16_t * scales, int cols, int group, float * out);

/** True when `name` is a routed expert matrix (model.layers.L.mlp.experts.E.{gate,up,down}_proj.weight). */
bool qpacked_is_expert_weight(const std::string & name);

}  // namespace rt
