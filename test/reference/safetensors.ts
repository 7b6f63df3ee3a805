/** Test-only safetensors reader: whole files into memory, sharded checkpoints via model.safetensors.index.json. */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/** A raw tensor: dtype as in the header, little-endian bytes. */
export type RawTensor = { readonly dtype: string; readonly shape: readonly number[]; readonly bytes: Uint8Array };

/** A parsed file: tensors by name plus the header's __metadata__ (empty when absent). */
export type SafetensorsFile = { readonly tensors: Map<string, RawTensor>; readonly metadata: Record<string, string> };

/** Parses one safetensors file, checking that offsets are contiguous and inside the file. */
export function readSafetensors(path: string): SafetensorsFile {
  const buf = readFileSync(path);
  if (buf.length < 8) throw new Error(`${path}: too short for a safetensors header`);
  const headerLen = Number(buf.readBigUInt64LE(0));
  if (8 + headerLen > buf.length) throw new Error(`${path}: header length ${headerLen} exceeds the file`);
  const header = JSON.parse(buf.subarray(8, 8 + headerLen).toString('utf8')) as Record<string, unknown>;
  const base = 8 + headerLen;
  const tensors = new Map<string, RawTensor>();
  let metadata: Record<string, string> = {};
  const spans: [number, number][] = [];
  for (const [name, value] of Object.entries(header)) {
    if (name === '__metadata__') {
      metadata = value as Record<string, string>;
      continue;
    }
    const v = value as { dtype: string; shape: number[]; data_offsets: [number, number] };
    const [start, end] = v.data_offsets;
    if (base + end > buf.length || start > end) throw new Error(`${path}: tensor ${name} offsets out of range`);
    spans.push([start, end]);
    tensors.set(name, { dtype: v.dtype, shape: v.shape, bytes: new Uint8Array(buf.buffer, buf.byteOffset + base + start, end - start) });
  }
  spans.sort((a, b) => a[0] - b[0]);
  let at = 0;
  for (const [s, e] of spans) {
    if (s !== at) throw new Error(`${path}: tensor data not contiguous at byte ${s}`);
    at = e;
  }
  if (base + at !== buf.length) throw new Error(`${path}: ${buf.length - base - at} trailing bytes after tensor data`);
  return { tensors, metadata };
}

/** All tensors of a checkpoint folder (sharded via the index, or a single model.safetensors). */
export function readCheckpoint(dir: string): { tensors: Map<string, RawTensor>; metadata: Record<string, string>[] } {
  const indexPath = join(dir, 'model.safetensors.index.json');
  const files = existsSync(indexPath)
    ? [...new Set(Object.values((JSON.parse(readFileSync(indexPath, 'utf8')) as { weight_map: Record<string, string> }).weight_map))]
    : ['model.safetensors'];
  const tensors = new Map<string, RawTensor>();
  const metadata: Record<string, string>[] = [];
  for (const f of files) {
    const file = readSafetensors(join(dir, f));
    metadata.push(file.metadata);
    for (const [name, t] of file.tensors) tensors.set(name, t);
  }
  return { tensors, metadata };
}
