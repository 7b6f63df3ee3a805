/** BF16 <-> float32 conversions (round to nearest even, NaN kept quiet). */

const f32 = new Float32Array(1);
const u32 = new Uint32Array(f32.buffer);

/** BF16 bits of `x` rounded to nearest even. */
export function f32ToBf16Bits(x: number): number {
  f32[0] = x;
  const bits = u32[0]!;
  if ((bits & 0x7f800000) === 0x7f800000 && (bits & 0x007fffff) !== 0) return ((bits >>> 16) | 0x40) & 0xffff;
  return ((bits + 0x7fff + ((bits >>> 16) & 1)) >>> 16) & 0xffff;
}

/** The float32 value of BF16 bits (exact). */
export function bf16BitsToF32(h: number): number {
  u32[0] = (h & 0xffff) << 16;
  return f32[0]!;
}

/** Converts float32 values to little-endian BF16 bytes, written into `out` starting at byte `offset`. */
export function encodeBf16(values: Float32Array, out: Uint8Array, offset = 0): void {
  const src = new Uint32Array(values.buffer, values.byteOffset, values.length);
  for (let i = 0; i < values.length; i++) {
    const bits = src[i]!;
    let h: number;
    if ((bits & 0x7f800000) === 0x7f800000 && (bits & 0x007fffff) !== 0) h = ((bits >>> 16) | 0x40) & 0xffff;
    else h = ((bits + 0x7fff + ((bits >>> 16) & 1)) >>> 16) & 0xffff;
    out[offset + 2 * i] = h & 0xff;
    out[offset + 2 * i + 1] = h >>> 8;
  }
}
