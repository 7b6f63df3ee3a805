/** Streaming safetensors writer: the header is computed from shapes first, then each tensor's bytes are streamed. */
import { closeSync, fsyncSync, openSync, renameSync, writeSync } from 'node:fs';

export type SafetensorsDtype = 'BF16' | 'F16' | 'F32' | 'U8';

/** One tensor to write; `write` must emit exactly the tensor's byte length through `sink`, in order. */
export type TensorSource = {
  readonly name: string;
  readonly dtype: SafetensorsDtype;
  readonly shape: readonly number[];
  readonly write: (sink: (bytes: Uint8Array) => void) => void;
};

const DTYPE_BYTES: Record<SafetensorsDtype, number> = { BF16: 2, F16: 2, F32: 4, U8: 1 };

/** Bytes a tensor of this dtype and shape occupies. */
export function tensorByteLength(dtype: SafetensorsDtype, shape: readonly number[]): number {
  return shape.reduce((a, b) => a * b, 1) * DTYPE_BYTES[dtype];
}

/** Builds the 8-byte length prefix plus the space-padded JSON header (tensors in the given order). */
export function buildSafetensorsHeader(
  tensors: readonly Pick<TensorSource, 'name' | 'dtype' | 'shape'>[],
  metadata: Record<string, string> | null,
): { prefix: Uint8Array; dataBytes: number } {
  const header: Record<string, unknown> = {};
  if (metadata) header.__metadata__ = metadata;
  let offset = 0;
  for (const t of tensors) {
    const n = tensorByteLength(t.dtype, t.shape);
    header[t.name] = { dtype: t.dtype, shape: [...t.shape], data_offsets: [offset, offset + n] };
    offset += n;
  }
  let json = JSON.stringify(header);
  json += ' '.repeat((8 - (Buffer.byteLength(json) % 8)) % 8);
  const body = Buffer.from(json, 'utf8');
  const prefix = new Uint8Array(8 + body.length);
  new DataView(prefix.buffer).setBigUint64(0, BigInt(body.length), true);
  prefix.set(body, 8);
  return { prefix, dataBytes: offset };
}

/** Writes a safetensors file atomically (temp + rename) and returns its size in bytes. */
export function writeSafetensorsFile(
  path: string,
  tensors: readonly TensorSource[],
  metadata: Record<string, string> | null = { format: 'pt' },
): number {
  const { prefix, dataBytes } = buildSafetensorsHeader(tensors, metadata);
  const tmp = `${path}.tmp-${process.pid}`;
  const fd = openSync(tmp, 'w');
  try {
    writeSync(fd, prefix);
    for (const t of tensors) {
      const expected = tensorByteLength(t.dtype, t.shape);
      let written = 0;
      t.write((bytes) => {
        let off = 0;
        while (off < bytes.length) off += writeSync(fd, bytes, off, bytes.length - off);
        written += bytes.length;
      });
      if (written !== expected) {
        throw new Error(`${path}: tensor ${t.name} wrote ${written} bytes, expected ${expected}`);
      }
    }
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(tmp, path);
  return prefix.length + dataBytes;
}
