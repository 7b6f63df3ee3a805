/**
 * llama.cpp's Q4_0 round trip and its Q8_0 one (the activations llama.cpp multiplies Q4_0 weights by), written from ggml's quantize_row_q4_0_ref and dequantize_row_q4_0 in float32
 * arithmetic (Math.fround after each operation): per 32 values, max = the first of the largest magnitude,
 * d = max / -8, id = 1 / d (0 when d is 0), q = min(15, trunc(x * id + 8.5)), value (q - 8) * fp16(d).
 * The independent side of the native round trips' tests (native/src/quant/q4-0.h), checked against gguf-py's own.
 */
import { f16BitsToF32, f32ToF16Bits } from './qpacked.js';

export function q4_0RoundTrip(w: Float32Array): Float32Array {
  if (w.length % 32 !== 0) throw new Error(`q4_0RoundTrip: ${w.length} values are not whole blocks of 32`);
  const out = new Float32Array(w.length);
  for (let b = 0; b < w.length; b += 32) {
    let amax = 0;
    let max = 0;
    for (let i = b; i < b + 32; i++) {
      if (amax < Math.abs(w[i]!)) {
        amax = Math.abs(w[i]!);
        max = w[i]!;
      }
    }
    const d = Math.fround(max / -8);
    const id = d !== 0 ? Math.fround(1 / d) : 0;
    const dh = f16BitsToF32(f32ToF16Bits(d));
    for (let i = b; i < b + 32; i++) {
      const q = Math.min(15, Math.trunc(Math.fround(Math.fround(w[i]! * id) + 8.5)));
      out[i] = (q - 8) * dh;
    }
  }
  return out;
}

/**
 * ggml's quantize_row_q8_0_ref then dequantize_row_q8_0: per 32 values, d = max|x| / 127, id = 1 / d (0 when d is 0),
 * q = roundf(x * id) (ties away from zero), value q * fp16(d).
 */
export function q8_0RoundTrip(x: Float32Array): Float32Array {
  if (x.length % 32 !== 0) throw new Error(`q8_0RoundTrip: ${x.length} values are not whole blocks of 32`);
  const out = new Float32Array(x.length);
  for (let b = 0; b < x.length; b += 32) {
    let amax = 0;
    for (let i = b; i < b + 32; i++) amax = Math.max(amax, Math.abs(x[i]!));
    const d = Math.fround(amax / 127);
    const id = d !== 0 ? Math.fround(1 / d) : 0;
    const dh = f16BitsToF32(f32ToF16Bits(d));
    for (let i = b; i < b + 32; i++) {
      const t = Math.fround(x[i]! * id);
      const q = t < 0 ? -Math.floor(0.5 - t) : Math.floor(t + 0.5);
      out[i] = (q + 0) * dh; // + 0: the stored int8 has no -0
    }
  }
  return out;
}
