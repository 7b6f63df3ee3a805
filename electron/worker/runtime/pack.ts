/**
 * `packModel`: the native qpacked-v2 packer, then sha256 of every source and output file (streamed), then
 * horizon-manifest.json written last (temp + rename), so a folder with a manifest is always complete. The source
 * shards, and each output shard once the packer has written it, are hashed while the packer runs (see earlyHashes).
 */
import { existsSync, readdirSync, readFileSync, realpathSync, rmSync, statSync } from 'node:fs';
import path from 'node:path';

import { QPACKED_CODEBOOK, QPACKED_FORMAT } from '../../common/qpacked-format.js';
import { toolVersion } from '../../node/app-root.js';
import { writeFileAtomic } from '../../node/atomic-write.js';
import { hashFile, throwIfAborted, type FileDigest } from '../../node/file-hasher.js';
import { packNative } from './binding.js';

/** One file in the manifest. */
export interface ManifestFile {
  readonly path: string;
  readonly size: number;
  readonly sha256: string;
}

/** horizon-manifest.json of a qpacked-v2 folder. */
export interface PackManifest {
  readonly format: typeof QPACKED_FORMAT;
  readonly group_size: number;
  /** The 4-bit levels' table (native/src/quant/qpacked.h). */
  readonly codebook: typeof QPACKED_CODEBOOK;
  readonly tool: 'horizon-runmap';
  readonly tool_version: string;
  readonly source: { readonly repo: string | null; readonly revision: string | null; readonly files: readonly ManifestFile[] };
  readonly outputs: readonly ManifestFile[];
  readonly created_at: string;
}

/** A progress report: `pack` counts source tensor bytes converted, `hash` bytes hashed over all files. */
export interface PackProgress {
  readonly phase: 'pack' | 'hash';
  readonly doneBytes: number;
  readonly totalBytes: number;
}

export interface PackModelOptions {
  readonly src: string;
  readonly dst: string;
  readonly groupSize?: number;
  readonly threads?: number;
  /** Hub repo and revision recorded in the manifest (null when unknown). */
  readonly repo?: string | null;
  readonly revision?: string | null;
  /** Target output shard size in bytes (default about 2 GB). */
  readonly shardBytes?: number;
  readonly onProgress?: (p: PackProgress) => void;
  readonly signal?: AbortSignal;
}

export const MANIFEST_NAME = 'horizon-manifest.json';

/** The safetensors shards a checkpoint folder names: its index's files, else model.safetensors; [] when unreadable. */
export function checkpointShards(src: string): string[] {
  try {
    const index = JSON.parse(readFileSync(path.join(src, 'model.safetensors.index.json'), 'utf8')) as { weight_map?: Record<string, unknown> };
    const files = Object.values(index.weight_map ?? {}).filter((f): f is string => typeof f === 'string' && !f.includes('/') && !f.includes('\\'));
    return [...new Set(files)].sort();
  } catch {
    return existsSync(path.join(src, 'model.safetensors')) ? ['model.safetensors'] : [];
  }
}

interface EarlyHashes {
  /** Digests by the file's path. */
  readonly digests: Map<string, FileDigest>;
  /** Settles once every file added so far is hashed, or the hashing has stopped. */
  done: Promise<void>;
  /** The file being hashed and its bytes so far. */
  current: { readonly file: string; bytes: number } | null;
  onBytes?: (file: string, n: number) => void;
  /** Hashes `file` after the files added before it. */
  add(file: string): void;
}

/**
 * Hashes files one after another, from now on: the packer's native threads leave this JS thread idle. First the
 * checkpoint's shards, read while the packer has them in the page cache and not again after it; then each output shard
 * as the packer reports it done. Only a guess at what the manifest lists: packAndHash uses the digests of the files
 * the packer names whose size has not changed.
 */
function earlyHashes(files: readonly string[], signal: AbortSignal): EarlyHashes {
  let stopped = false;
  const job: EarlyHashes = {
    digests: new Map(),
    done: Promise.resolve(),
    current: null,
    add(file: string) {
      job.done = job.done.then(() => hashOne(file));
    },
  };
  const hashOne = async (file: string): Promise<void> => {
    if (stopped || signal.aborted) return;
    const current = { file, bytes: 0 };
    job.current = current;
    try {
      const onBytes = (n: number) => {
        current.bytes += n;
        job.onBytes?.(file, n);
      };
      job.digests.set(file, await hashFile(file, { signal, onBytes }));
    } catch {
      // Missing, unreadable or aborted: the packer's own error, or hashing after it, says what is wrong.
      stopped = true;
    } finally {
      job.current = null;
    }
  };
  for (const file of files) job.add(file);
  return job;
}

/** Packs `src` into `dst` and writes the manifest; resolves with it. */
export async function packModel(options: PackModelOptions): Promise<PackManifest> {
  const { src, dst, signal } = options;
  // The packed folder has its own config and index: written over the checkpoint, they would replace its own.
  const real = (p: string): string => (existsSync(p) ? realpathSync(p) : path.resolve(p));
  if (real(src) === real(dst)) throw new Error(`pack: the output folder ${dst} is the checkpoint folder itself; choose another (e.g. ${path.join(dst, 'int4-g32')})`);
  rmSync(path.join(dst, MANIFEST_NAME), { force: true });
  // The early hashing stops on a cancel and on any failure here, and packModel settles only once it has stopped.
  const stopEarly = new AbortController();
  const stop = () => stopEarly.abort();
  signal?.addEventListener('abort', stop, { once: true });
  const early = earlyHashes(
    checkpointShards(src).map((name) => path.join(src, name)),
    stopEarly.signal,
  );
  try {
    return await packAndHash(options, early);
  } catch (error) {
    stopEarly.abort();
    throw error;
  } finally {
    await early.done;
    signal?.removeEventListener('abort', stop);
  }
}

/** The native packer, the hashes (the early ones where they hold) and the manifest. */
async function packAndHash(options: PackModelOptions, early: EarlyHashes): Promise<PackManifest> {
  const { src, dst, onProgress, signal } = options;
  const packed = await packNative(
    { src, dst, groupSize: options.groupSize, threads: options.threads, shardBytes: options.shardBytes },
    (doneBytes, totalBytes) => onProgress?.({ phase: 'pack', doneBytes, totalBytes }),
    signal,
    (shard) => early.add(path.join(dst, shard)),
  );
  // Shards of an earlier pack with another shard count would otherwise linger beside the new ones.
  const current = new Set(packed.outputFiles);
  for (const name of readdirSync(dst)) {
    if (/^model-qpacked-\d{5}-of-\d{5}\.safetensors(\.tmp)?$/.test(name) && !current.has(name)) rmSync(path.join(dst, name), { force: true });
  }
  const entries = [
    ...packed.sourceFiles.map((p) => ({ root: src, p, out: false })),
    ...packed.outputFiles.map((p) => ({ root: dst, p, out: true })),
  ].map((e) => ({ ...e, file: path.join(e.root, e.p) }));
  const sizes = entries.map((e) => statSync(e.file).size);
  const totalBytes = sizes.reduce((a, b) => a + b, 0);
  const wanted = new Set(entries.map((e) => e.file));
  // The early hashes' bytes count once the packer is done, and only for files it names.
  let doneBytes = [...early.digests].reduce((a, [file, d]) => a + (wanted.has(file) ? d.size : 0), 0);
  if (early.current && wanted.has(early.current.file)) doneBytes += early.current.bytes;
  const onBytes = (n: number) => {
    doneBytes += n;
    onProgress?.({ phase: 'hash', doneBytes, totalBytes });
  };
  onProgress?.({ phase: 'hash', doneBytes, totalBytes });
  early.onBytes = (file, n) => {
    if (wanted.has(file)) onBytes(n);
  };
  await early.done;
  throwIfAborted(signal);
  const sourceFiles: ManifestFile[] = [];
  const outputs: ManifestFile[] = [];
  for (const [i, e] of entries.entries()) {
    const earlyDigest = early.digests.get(e.file);
    let sha256: string;
    if (earlyDigest && earlyDigest.size === sizes[i]) {
      sha256 = earlyDigest.sha256;
    } else {
      // Changed since it was hashed early (its size says so): hashed again, its early bytes no longer counted.
      if (earlyDigest) doneBytes -= earlyDigest.size;
      sha256 = (await hashFile(e.file, { onBytes, signal })).sha256;
    }
    (e.out ? outputs : sourceFiles).push({ path: e.p.split(path.sep).join('/'), size: sizes[i]!, sha256 });
  }
  const manifest: PackManifest = {
    format: QPACKED_FORMAT,
    group_size: packed.groupSize,
    codebook: QPACKED_CODEBOOK,
    tool: 'horizon-runmap',
    tool_version: toolVersion(),
    source: { repo: options.repo ?? null, revision: options.revision ?? null, files: sourceFiles },
    outputs,
    created_at: new Date().toISOString(),
  };
  // Flushed and renamed into place last (retried while Windows reports the file held open): its presence means done.
  await writeFileAtomic(path.join(dst, MANIFEST_NAME), `${JSON.stringify(manifest, null, 2)}\n`);
  return manifest;
}
