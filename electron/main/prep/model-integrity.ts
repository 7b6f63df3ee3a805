/**
 * The checks every model load goes through: a prepared model against its prepared.json and its packed folder's
 * horizon-manifest.json, a loose packed folder against its horizon-manifest.json. Sizes and structure are checked on
 * every load; content hashes when a file's size or mtime moved since it last verified (remembered in verified.json
 * beside prepared.json), or on every file when asked (`verify`).
 */
import fs from 'node:fs';
import path from 'node:path';

import { QPACKED_CODEBOOK, QPACKED_FORMAT } from '../../common/qpacked-format.js';
import { writeFileAtomic } from '../../node/atomic-write.js';
import { hashFile } from '../../node/file-hasher.js';
import { PrepError } from './prep-error.js';
import { listedFiles, PREPARED_MANIFEST, readPreparedManifest, verifyPreparedFiles, type PreparedFile, type PreparedManifest } from './prepared-manifest.js';

export const PACKED_MANIFEST = 'horizon-manifest.json';
/** Beside prepared.json: each file's size, mtime and sha256 when it last hashed to what prepared.json records. */
export const VERIFIED_RECORD = 'verified.json';

export interface IntegrityOptions {
  /** Hash every file, whatever the record says. */
  readonly verify?: boolean;
  readonly signal?: AbortSignal;
}

type VerifiedEntry = { readonly size: number; readonly mtimeMs: number; readonly sha256: string };

// Whole milliseconds: what every filesystem and copy tool keeps of an mtime (sub-millisecond parts do not survive a
// touch or a restore, so comparing them would re-hash files that did not change).
const mtimeOf = (st: fs.Stats): number => Math.floor(st.mtimeMs);
type VerifiedRecord = { format: 'horizon-verified-v1'; files: Record<string, VerifiedEntry> };

function refuse(where: string, what: string, problems: readonly string[]): PrepError {
  const shown = problems.slice(0, 8).map((p) => `\n  - ${p}`).join('');
  const more = problems.length > 8 ? `\n  - and ${problems.length - 8} more` : '';
  return new PrepError('MODEL_INVALID', `${where}: ${what}; it was not loaded:${shown}${more}`);
}

async function readRecord(modelDir: string): Promise<VerifiedRecord> {
  try {
    const v = JSON.parse(await fs.promises.readFile(path.join(modelDir, VERIFIED_RECORD), 'utf8')) as VerifiedRecord;
    if (v?.format === 'horizon-verified-v1' && typeof v.files === 'object' && v.files !== null) return v;
  } catch {
    // No record, or a damaged one: every file is hashed again.
  }
  return { format: 'horizon-verified-v1', files: {} };
}

/**
 * Records the files of a model that was just prepared (and so just hashed) as verified at their current size and
 * mtime, so that its first load does not hash them again.
 */
export async function rememberVerified(modelDir: string, manifest: PreparedManifest): Promise<void> {
  const record: VerifiedRecord = { format: 'horizon-verified-v1', files: {} };
  for (const { rel, file } of listedFiles(manifest)) {
    const st = await fs.promises.stat(path.join(modelDir, rel));
    if (st.size === file.size) record.files[rel] = { size: st.size, mtimeMs: mtimeOf(st), sha256: file.sha256 };
  }
  await writeFileAtomic(path.join(modelDir, VERIFIED_RECORD), `${JSON.stringify(record)}\n`);
}

/**
 * Checks a prepared model before it is loaded; resolves with its manifest, or throws a MODEL_INVALID PrepError that
 * names the folder and lists each file that does not match.
 */
export async function checkPreparedModel(modelDir: string, opts: IntegrityOptions = {}): Promise<PreparedManifest> {
  const manifest = await readPreparedManifest(modelDir);
  const problems = await verifyPreparedFiles(modelDir, manifest, false, opts.signal);
  if (problems.length > 0) throw refuse(modelDir, `its files no longer match ${PREPARED_MANIFEST}`, problems);
  if (manifest.pack) {
    const packedDir = path.join(modelDir, manifest.pack.dir);
    const packed = await readPackedManifest(packedDir, manifest.pack.groupSize);
    const listed = new Map(manifest.pack.files.map((f) => [f.path, f]));
    const structure: string[] = [];
    if (!listed.has(PACKED_MANIFEST)) structure.push(`${PREPARED_MANIFEST} does not list ${manifest.pack.dir}/${PACKED_MANIFEST}`);
    for (const o of packed.outputs) {
      const l = listed.get(o.path);
      if (!l) structure.push(`${manifest.pack.dir}/${o.path}: in ${PACKED_MANIFEST} but not in ${PREPARED_MANIFEST}`);
      else if (l.size !== o.size || l.sha256 !== o.sha256) structure.push(`${manifest.pack.dir}/${o.path}: ${PACKED_MANIFEST} and ${PREPARED_MANIFEST} record different contents`);
    }
    const outputs = new Set(packed.outputs.map((o) => o.path));
    for (const f of manifest.pack.files) {
      if (f.path.endsWith('.safetensors') && !outputs.has(f.path)) structure.push(`${manifest.pack.dir}/${f.path}: not among the packer's outputs in ${PACKED_MANIFEST}`);
    }
    if (structure.length > 0) throw refuse(modelDir, 'its packed folder does not match what was prepared', structure);
  }

  const record = await readRecord(modelDir);
  // A file not in the record was last verified when preparation hashed it, just before it wrote prepared.json (a
  // model prepared before verified.json existed, or a lost record): untouched since, it is taken as verified then.
  const preparedAt = mtimeOf(await fs.promises.stat(path.join(modelDir, PREPARED_MANIFEST)));
  const mismatched: string[] = [];
  let changed = false;
  for (const { rel, file } of listedFiles(manifest)) {
    if (opts.signal?.aborted) throw new PrepError('CANCELLED', `${modelDir}: verification cancelled`);
    const abs = path.join(modelDir, ...rel.split('/'));
    const st = await fs.promises.stat(abs);
    const seen = record.files[rel];
    if (!opts.verify && seen && seen.size === st.size && seen.mtimeMs === mtimeOf(st) && seen.sha256 === file.sha256) continue;
    if (!opts.verify && !seen && mtimeOf(st) <= preparedAt) {
      record.files[rel] = { size: st.size, mtimeMs: mtimeOf(st), sha256: file.sha256 };
      changed = true;
      continue;
    }
    const { sha256 } = await hashFile(abs, opts.signal ? { signal: opts.signal } : {});
    if (sha256 !== file.sha256) {
      mismatched.push(`${rel}: sha256 ${sha256}, ${PREPARED_MANIFEST} records ${file.sha256}`);
      delete record.files[rel];
    } else record.files[rel] = { size: st.size, mtimeMs: mtimeOf(st), sha256 };
    changed = true;
  }
  if (changed) {
    // Only a cache of work done: a model folder that cannot be written still loads (and hashes again next time).
    await writeFileAtomic(path.join(modelDir, VERIFIED_RECORD), `${JSON.stringify(record)}\n`).catch(() => undefined);
  }
  if (mismatched.length > 0) throw refuse(modelDir, `its contents changed since it was prepared (prepare it again)`, mismatched);
  return manifest;
}

export type PackedManifestView = { readonly groupSize: number; readonly outputs: readonly PreparedFile[] };

/** Reads and shape-checks `<packedDir>/horizon-manifest.json` (and its group size when `groupSize` is given). */
export async function readPackedManifest(packedDir: string, groupSize?: number): Promise<PackedManifestView> {
  const file = path.join(packedDir, PACKED_MANIFEST);
  let m: { format?: unknown; group_size?: unknown; codebook?: unknown; outputs?: unknown };
  try {
    m = JSON.parse(await fs.promises.readFile(file, 'utf8')) as typeof m;
  } catch (error) {
    const e = error as NodeJS.ErrnoException;
    const why = e.code === 'ENOENT' ? 'missing (an unfinished pack: pack it again)' : e instanceof SyntaxError ? `not valid JSON (${e.message})` : e.message;
    throw new PrepError('MODEL_INVALID', `${file}: ${why}`);
  }
  const bad = (what: string) => new PrepError('MODEL_INVALID', `${file}: ${what}`);
  if (typeof m !== 'object' || m === null || Array.isArray(m)) throw bad('not a JSON object');
  if (m.format !== QPACKED_FORMAT) throw bad(`format ${JSON.stringify(m.format)}, expected "${QPACKED_FORMAT}" (pack it again)`);
  if (m.codebook !== QPACKED_CODEBOOK) throw bad(`codebook ${JSON.stringify(m.codebook)}, expected "${QPACKED_CODEBOOK}" (pack it again)`);
  if (!Number.isInteger(m.group_size) || (m.group_size as number) <= 0) throw bad(`group_size ${JSON.stringify(m.group_size)} is not a positive integer`);
  if (groupSize !== undefined && m.group_size !== groupSize) throw bad(`group_size ${String(m.group_size)}, but ${PREPARED_MANIFEST} records ${groupSize}`);
  const outputs = m.outputs;
  const isFile = (o: unknown): o is PreparedFile => {
    const f = o as PreparedFile;
    return typeof f?.path === 'string' && Number.isInteger(f.size) && typeof f.sha256 === 'string' && /^[0-9a-f]{64}$/.test(f.sha256);
  };
  if (!Array.isArray(outputs) || outputs.length === 0 || !outputs.every(isFile)) throw bad('outputs is not a list of {path, size, sha256}');
  if (!outputs.some((o) => o.path.endsWith('.safetensors'))) throw bad('lists no .safetensors shard');
  for (const o of outputs) {
    if (o.path.includes('/') || o.path.includes('\\') || o.path.startsWith('.')) throw bad(`output path ${JSON.stringify(o.path)} is not a file name in the folder`);
  }
  return { groupSize: m.group_size as number, outputs };
}

/**
 * Checks a packed folder loaded without prepared.json against its horizon-manifest.json: sizes always; sha256 of
 * every output with `verify`, or against `digests` (path -> sha256) when the caller has hashed them already.
 */
export async function checkPackedFolder(packedDir: string, opts: IntegrityOptions & { digests?: ReadonlyMap<string, string> } = {}): Promise<void> {
  const manifest = await readPackedManifest(packedDir);
  const problems: string[] = [];
  for (const o of manifest.outputs) {
    const abs = path.join(packedDir, o.path);
    let size: number;
    try {
      size = (await fs.promises.stat(abs)).size;
    } catch {
      problems.push(`${o.path}: missing`);
      continue;
    }
    if (size !== o.size) {
      problems.push(`${o.path}: ${size} bytes, ${PACKED_MANIFEST} records ${o.size}`);
      continue;
    }
    const known = opts.digests?.get(o.path);
    const sha256 = known ?? (opts.verify ? (await hashFile(abs, opts.signal ? { signal: opts.signal } : {})).sha256 : undefined);
    if (sha256 !== undefined && sha256 !== o.sha256) problems.push(`${o.path}: sha256 ${sha256}, ${PACKED_MANIFEST} records ${o.sha256}`);
  }
  if (problems.length > 0) throw refuse(packedDir, `its files do not match ${PACKED_MANIFEST} (pack it again)`, problems);
}
