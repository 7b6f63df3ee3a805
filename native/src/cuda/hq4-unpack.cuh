#pragma once
// Unpacking qpacked-v2 codes in registers: eight 4-bit codes of a word (low nibble first) become their codebook
// levels without a table in memory. The 16 levels, shifted by +128 into bytes (1 .. 237), sit in four words; byte
// permutes pick them (two 8-byte halves, then one of the two per code), which leaves the shared-memory pipe to the
// activations. Levels are integers, exact in FP16 and FP32.
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "quant/qpacked.h"

namespace rt_cuda {
namespace hq4 {

constexpr int kLevels[16] = {RT_HQ4_LEVELS};
constexpr uint32_t pack(int i) {
  return static_cast<uint32_t>(kLevels[i] + 128) | static_cast<uint32_t>(kLevels[i + 1] + 128) << 8 |
         static_cast<uint32_t>(kLevels[i + 2] + 128) << 16 | static_cast<uint32_t>(kLevels[i + 3] + 128) << 24;
}
constexpr uint32_t kT0 = pack(0), kT1 = pack(4), kT2 = pack(8), kT3 = pack(12);

/** Shifted levels (level + 128) of the codes of `w`: columns 0..3 in the bytes of `lo`, 4..7 in those of `hi`. */
__device__ __forceinline__ void shifted_bytes(uint32_t w, uint32_t & lo, uint32_t & hi) {
  const uint32_t idx = w & 0x77777777u;
  // Byte n of the selector: n from the first pick (codes 0..7) or n + 4 from the second (codes 8..15).
  const uint32_t sel = 0x32103210u | ((w & 0x88888888u) >> 1);
  lo = __byte_perm(__byte_perm(kT0, kT1, idx), __byte_perm(kT2, kT3, idx), sel);
  hi = __byte_perm(__byte_perm(kT0, kT1, idx >> 16), __byte_perm(kT2, kT3, idx >> 16), sel >> 16);
}

/** Level of byte `i` (0..3) of shifted bytes as a float: 2^23 + b built by a byte permute, less 2^23 + 128. */
template <int i>
__device__ __forceinline__ float level_f32(uint32_t bytes) {
  return __uint_as_float(__byte_perm(bytes, 0x4B000000u, 0x7540u + i)) - 8388736.0f;
}

/** Levels of bytes (0, 1) (`i` = 0) or (2, 3) (`i` = 1) as FP16 pairs: 1024 + b built by a byte permute, less 1152. */
template <int i>
__device__ __forceinline__ __half2 level_h2(uint32_t bytes) {
  const uint32_t bits = __byte_perm(bytes, 0x64646464u, i == 0 ? 0x4140u : 0x4342u);
  return __hsub2(*reinterpret_cast<const __half2 *>(&bits), __float2half2_rn(1152.0f));
}

}  // namespace hq4
}  // namespace rt_cuda
