/**
 * Reference packer for qpacked-v2 (the spec in native/src/quant/qpacked.h): per (row, group) a signed FP16 scale and
 * 4-bit codes into a 16-level codebook, the scale chosen by a least-squares search; byte j of a row holds column 2j
 * in the low nibble and 2j+1 in the high nibble. Bit-exact with the C++ packer (JS numbers are the spec's doubles);
 * slow is fine.
 */
import type { RawTensor } from './safetensors.js';

const f32 = new Float32Array(1);
const u32 = new Uint32Array(f32.buffer);

/** FP16 bits of the float32 value of `x`, rounded to nearest even (overflow to inf, subnormals kept). */
export function f32ToF16Bits(x: number): number {
  f32[0] = x;
  const bits = u32[0]!;
  const sign = (bits >>> 16) & 0x8000;
  const exp = (bits >>> 23) & 0xff;
  let mant = bits & 0x7fffff;
  if (exp === 0xff) return sign | 0x7c00 | (mant !== 0 ? 0x200 | (mant >>> 13) : 0);
  const e = exp - 127 + 15;
  if (e >= 31) return sign | 0x7c00;
  if (e <= 0) {
    if (exp === 0) return sign;
    mant |= 0x800000;
    const shift = 14 - e;
    if (shift > 24) return sign;
    let h = mant >>> shift;
    const rem = mant & ((1 << shift) - 1);
    const half = 1 << (shift - 1);
    if (rem > half || (rem === half && (h & 1) === 1)) h++;
    return sign | h;
  }
  let h = (e << 10) | (mant >>> 13);
  const rem = mant & 0x1fff;
  if (rem > 0x1000 || (rem === 0x1000 && (h & 1) === 1)) h++;
  return sign | h;
}

/** The float value of FP16 bits (exact). */
export function f16BitsToF32(h: number): number {
  const sign = h & 0x8000 ? -1 : 1;
  const exp = (h >>> 10) & 0x1f;
  const mant = h & 0x3ff;
  if (exp === 0) return sign * mant * 2 ** -24;
  if (exp === 31) return mant !== 0 ? NaN : sign * Infinity;
  return sign * (1 + mant / 1024) * 2 ** (exp - 15);
}

/** The float value of BF16 bits (exact). */
export function bf16BitsToF32(h: number): number {
  u32[0] = (h & 0xffff) << 16;
  return f32[0]!;
}

/** Float32 values of a BF16, F16 or F32 tensor. */
export function tensorToFloat32(t: RawTensor): Float32Array {
  const dv = new DataView(t.bytes.buffer, t.bytes.byteOffset, t.bytes.byteLength);
  const n = t.shape.reduce((a, b) => a * b, 1);
  const out = new Float32Array(n);
  switch (t.dtype) {
    case 'BF16':
      for (let i = 0; i < n; i++) out[i] = bf16BitsToF32(dv.getUint16(2 * i, true));
      return out;
    case 'F16':
      for (let i = 0; i < n; i++) out[i] = f16BitsToF32(dv.getUint16(2 * i, true));
      return out;
    case 'F32':
      for (let i = 0; i < n; i++) out[i] = dv.getFloat32(4 * i, true);
      return out;
    default:
      throw new Error(`qpacked reference: cannot read dtype ${t.dtype} as float`);
  }
}

/** The codebook levels (hq4nl): a weight is LEVELS[u] * scale. */
export const LEVELS: readonly number[] = [-127, -100, -78, -61, -45, -32, -19, -8, 2, 12, 22, 35, 48, 64, 83, 109];
/** Divisors of a group's largest-magnitude value tried as first scales. */
export const CANDIDATES: readonly number[] = [-136, -128, -120, -112, -104, 96, 104, 112, 120, 128];
const MIDPOINTS = LEVELS.slice(1).map((v, i) => (LEVELS[i]! + v) / 2);

/** The index of the level nearest to t, ties to the lower: the number of midpoints strictly below t. */
export function nearestLevel(t: number): number {
  let k = 0;
  while (k < 15 && MIDPOINTS[k]! < t) k++;
  return k;
}

/** Routed expert weights, the only tensors qpacked-v2 quantises. */
export const EXPERT_WEIGHT = /^(model\.layers\.\d+\.mlp\.experts\.\d+\.(?:gate|up|down)_proj)\.weight$/;

/** The spec's group size: `override` if it is even and divides every `in`, else 32/16/8, the largest dividing all. */
export function chooseGroupSize(inDims: readonly number[], override?: number): number {
  if (override !== undefined) {
    if (override <= 0 || override % 2 !== 0 || inDims.some((d) => d % override !== 0)) {
      throw new Error(`qpacked: group size ${override} must be even and divide every expert input width (${[...new Set(inDims)].join(', ')})`);
    }
    return override;
  }
  for (const g of [32, 16, 8]) if (inDims.every((d) => d % g === 0)) return g;
  throw new Error(`qpacked: no group size in 32/16/8 divides every expert input width (${[...new Set(inDims)].join(', ')})`);
}

/** Quantises a row-major [rows, cols] float32 matrix; returns qweight [rows, cols/2] and FP16 scale bits [rows, cols/G]. */
export function quantizeQ4(w: Float32Array, rows: number, cols: number, groupSize: number): { qweight: Uint8Array; scales: Uint16Array } {
  if (cols % groupSize !== 0 || groupSize % 2 !== 0) throw new Error(`qpacked: group size ${groupSize} does not fit ${cols} columns`);
  const groups = cols / groupSize;
  const qweight = new Uint8Array((rows * cols) / 2);
  const scales = new Uint16Array(rows * groups);
  const codes = new Array<number>(groupSize);
  for (let r = 0; r < rows; r++) {
    for (let g = 0; g < groups; g++) {
      const start = r * cols + g * groupSize;
      const x = w.subarray(start, start + groupSize);
      let m = 0;
      for (let c = 0; c < groupSize; c++) if (Math.abs(x[c]!) > Math.abs(m)) m = x[c]!;
      let best = new Array<number>(groupSize).fill(8);
      let bestBits = 0;
      let bestErr = Infinity;
      if (m !== 0) {
        for (const cand of CANDIDATES) {
          const d0 = m / cand;
          let num = 0;
          let den = 0;
          for (let c = 0; c < groupSize; c++) {
            const k = LEVELS[nearestLevel(x[c]! / d0)]!;
            num += k * x[c]!;
            den += k * k;
          }
          const bits = f32ToF16Bits(Math.fround(den > 0 ? num / den : d0));
          const dh = f16BitsToF32(bits);
          if (!Number.isFinite(dh)) continue;
          let err = 0;
          for (let c = 0; c < groupSize; c++) {
            codes[c] = dh === 0 ? 8 : nearestLevel(x[c]! / dh);
            const diff = LEVELS[codes[c]!]! * dh - x[c]!;
            err += diff * diff;
          }
          if (err < bestErr) {
            bestErr = err;
            bestBits = bits;
            best = codes.slice();
          }
        }
      }
      scales[r * groups + g] = bestBits;
      for (let c = 0; c < groupSize; c++) {
        const col = g * groupSize + c;
        qweight[(r * cols + col) >> 1]! |= best[c]! << ((col & 1) * 4);
      }
    }
  }
  return { qweight, scales };
}

/** Dequantises qweight/scales back to float32: w' = LEVELS[u] * scale. */
export function dequantizeQ4(qweight: Uint8Array, scales: Uint16Array | Uint8Array, rows: number, cols: number): Float32Array {
  const scaleBits =
    scales instanceof Uint16Array ? scales : new Uint16Array(Array.from({ length: scales.length / 2 }, (_, i) => scales[2 * i]! | (scales[2 * i + 1]! << 8)));
  const groups = scaleBits.length / rows;
  const groupSize = cols / groups;
  const out = new Float32Array(rows * cols);
  for (let r = 0; r < rows; r++) {
    for (let c = 0; c < cols; c++) {
      const byte = qweight[(r * cols + c) >> 1]!;
      const u = (c & 1) === 0 ? byte & 0xf : byte >> 4;
      out[r * cols + c] = LEVELS[u]! * f16BitsToF32(scaleBits[r * groups + Math.floor(c / groupSize)]!);
    }
  }
  return out;
}

function f16Bytes(values: Float32Array): Uint8Array {
  const out = new Uint8Array(values.length * 2);
  for (let i = 0; i < values.length; i++) {
    const h = f32ToF16Bits(values[i]!);
    out[2 * i] = h & 0xff;
    out[2 * i + 1] = h >> 8;
  }
  return out;
}

/** Packs a checkpoint's tensors to qpacked-v2 (names, dtypes, shapes and bytes as the spec says). */
export function packTensorsReference(tensors: ReadonlyMap<string, RawTensor>, groupSizeOverride?: number): { groupSize: number; tensors: Map<string, RawTensor> } {
  const inDims: number[] = [];
  for (const [name, t] of tensors) if (EXPERT_WEIGHT.test(name)) inDims.push(t.shape[1]!);
  const groupSize = chooseGroupSize(inDims, groupSizeOverride);
  const out = new Map<string, RawTensor>();
  for (const [name, t] of tensors) {
    const values = tensorToFloat32(t);
    const m = EXPERT_WEIGHT.exec(name);
    if (!m) {
      out.set(name, { dtype: 'F16', shape: t.shape, bytes: f16Bytes(values) });
      continue;
    }
    const [rows, cols] = t.shape as [number, number];
    const { qweight, scales } = quantizeQ4(values, rows, cols, groupSize);
    out.set(`${m[1]}.qweight`, { dtype: 'U8', shape: [rows, cols / 2], bytes: qweight });
    const scaleBytes = new Uint8Array(scales.length * 2);
    scales.forEach((h, i) => {
      scaleBytes[2 * i] = h & 0xff;
      scaleBytes[2 * i + 1] = h >> 8;
    });
    out.set(`${m[1]}.scales`, { dtype: 'F16', shape: [rows, cols / groupSize], bytes: scaleBytes });
  }
  return { groupSize, tensors: out };
}
