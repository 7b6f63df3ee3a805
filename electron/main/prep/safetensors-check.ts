import fs from 'node:fs';

import { PrepError } from './prep-error.js';

const DTYPE_BYTES: Record<string, number> = {
  BOOL: 1, U8: 1, I8: 1, F8_E4M3: 1, F8_E5M2: 1, U16: 2, I16: 2, F16: 2, BF16: 2, U32: 4, I32: 4, F32: 4, U64: 8, I64: 8, F64: 8,
};
const MAX_HEADER_BYTES = 100_000_000;

/** A safetensors header: tensor names (in header order), their shapes, and the `__metadata__` strings. */
export type SafetensorsSummary = {
  readonly tensors: readonly string[];
  readonly shapes: Readonly<Record<string, readonly number[]>>;
  readonly metadata: Record<string, string>;
};

/**
 * Checks that a safetensors file's header is sane and that its tensors tile the data section exactly (sorted by
 * start, each begins where the previous ended, the last ends at the end of the file), as the reference safetensors
 * loader requires; a truncated, padded, overlapping or holed shard fails here with a message naming it.
 */
export async function checkSafetensorsFile(file: string, label: string): Promise<SafetensorsSummary> {
  const bad = (why: string): PrepError => new PrepError('MODEL_INVALID', `${label}: ${why}`);
  const fh = await fs.promises.open(file, 'r');
  try {
    const size = (await fh.stat()).size;
    if (size < 8) throw bad(`truncated or not a safetensors file (${size} bytes)`);
    const head = Buffer.alloc(8);
    await fh.read(head, 0, 8, 0);
    const headerLen = head.readBigUInt64LE(0);
    if (headerLen > BigInt(MAX_HEADER_BYTES)) throw bad(`not a safetensors file (header length ${headerLen} is implausible)`);
    const n = Number(headerLen);
    if (8 + n > size) throw bad(`truncated: the header needs ${8 + n} bytes but the file has ${size}`);
    const buf = Buffer.alloc(n);
    await fh.read(buf, 0, n, 8);
    let header: Record<string, unknown>;
    try {
      header = JSON.parse(buf.toString('utf8')) as Record<string, unknown>;
    } catch {
      throw bad('the safetensors header is not valid JSON');
    }
    if (header === null || typeof header !== 'object' || Array.isArray(header)) throw bad('the safetensors header is not a JSON object');
    const dataLen = size - 8 - n;
    const tensors: string[] = [];
    const shapes: Record<string, number[]> = {};
    const ranges: { name: string; start: number; end: number }[] = [];
    for (const [name, value] of Object.entries(header)) {
      if (name === '__metadata__') continue;
      const t = value as { dtype?: unknown; shape?: unknown; data_offsets?: unknown };
      const width = typeof t?.dtype === 'string' ? DTYPE_BYTES[t.dtype] : undefined;
      const shape = t?.shape;
      const offs = t?.data_offsets;
      if (width === undefined) throw bad(`tensor '${name}' has an unknown dtype ${JSON.stringify(t?.dtype)}`);
      if (!Array.isArray(shape) || !shape.every((d) => Number.isInteger(d) && d >= 0)) throw bad(`tensor '${name}' has a bad shape`);
      if (!Array.isArray(offs) || offs.length !== 2 || !offs.every((d) => Number.isInteger(d) && d >= 0) || offs[0] > offs[1]) {
        throw bad(`tensor '${name}' has bad data_offsets`);
      }
      const numel = (shape as number[]).reduce((a, b) => a * b, 1);
      if ((offs[1] as number) - (offs[0] as number) !== numel * width) throw bad(`tensor '${name}' data size does not match its shape and dtype`);
      ranges.push({ name, start: offs[0] as number, end: offs[1] as number });
      tensors.push(name);
      shapes[name] = shape as number[];
    }
    ranges.sort((a, b) => a.start - b.start || a.end - b.end);
    let end = 0;
    for (const [i, r] of ranges.entries()) {
      const prev = ranges[i - 1];
      if (r.start < end) throw bad(`tensors '${prev!.name}' (data bytes ${prev!.start}..${prev!.end}) and '${r.name}' (${r.start}..${r.end}) overlap`);
      if (r.start > end) {
        throw bad(`data bytes ${end}..${r.start} belong to no tensor (${prev ? `between '${prev.name}' and '${r.name}'` : `before '${r.name}'`})`);
      }
      end = r.end;
    }
    if (end > dataLen) throw bad(`truncated: the tensors need ${end} bytes of data but the file has ${dataLen} (file size ${size})`);
    if (end < dataLen) throw bad(`${dataLen - end} unexpected bytes after the tensor data`);
    const meta = header.__metadata__;
    const metadata: Record<string, string> = {};
    if (meta && typeof meta === 'object') for (const [k, v] of Object.entries(meta)) metadata[k] = String(v);
    return { tensors, shapes, metadata };
  } finally {
    await fh.close();
  }
}
