import fs from 'node:fs';
import path from 'node:path';

import { DEFAULT_MODEL_REPO, DEFAULT_MODEL_REVISION } from '../../common/ipc-contract.js';
import { QPACKED_CODEBOOK, QPACKED_FORMAT } from '../../common/qpacked-format.js';
import { toolVersion } from '../../node/app-root.js';
import { renameDurably, syncFile } from '../../node/atomic-write.js';
import { CHAT_TEMPLATE_FILE } from '../../node/chat-tokenizer.js';
import { hashFile, type FileDigest } from '../../node/file-hasher.js';
import { processAlive } from '../../node/lock-file.js';
import { dataLayout } from '../data-dir.js';
import { assertFreeSpace } from './disk-space.js';
import { downloadFile } from './download-file.js';
import { findCachedFile, hfCacheDir } from './hf-cache.js';
import { PACKED_MANIFEST, rememberVerified } from './model-integrity.js';
import { checkAllExpertTensors, checkMoeTensorShapes, defaultGroupSize, parseOlmoeConfig, type OlmoeConfig } from './olmoe-config.js';
import { runPacker, type PackerCommand, type PackerLauncher } from './pack-model.js';
import { PrepError, throwIfAborted, toPrepError } from './prep-error.js';
import { acquirePrepLock } from './prep-lock.js';
import { RateMeter, type PrepEvent } from './prep-events.js';
import {
  readPreparedManifest,
  verifyPreparedFiles,
  writePreparedManifest,
  type PreparedFile,
  type PreparedManifest,
} from './prepared-manifest.js';
import { resolveRepo, type RepoFile } from './resolve-repo.js';
import { checkSafetensorsFile } from './safetensors-check.js';

export const DEFAULT_HUB_URL = 'https://huggingface.co';

const METADATA_FILES = [
  'config.json',
  'tokenizer.json',
  'tokenizer_config.json',
  'special_tokens_map.json',
  'generation_config.json',
  CHAT_TEMPLATE_FILE,
];
const REQUIRED_FILES = ['config.json', 'tokenizer.json', 'tokenizer_config.json'];
const INDEX_FILE = 'model.safetensors.index.json';
/** INT4 experts + FP16 rest is about 0.31 of the BF16 checkpoint for OLMoE; the margin covers other shapes. */
const PACKED_SIZE_RATIO = 0.4;
const EMIT_INTERVAL_MS = 250;
/**
 * Shards fetched at once, a connection each: one connection to the Hub's CDN often runs well below the line's rate
 * (huggingface_hub fetches up to 8 files at once). OLMoE-1B-7B has three.
 */
export const DEFAULT_DOWNLOADS_AT_ONCE = 3;

export type PrepareModelOptions = {
  readonly repo?: string;
  /** Branch, tag or commit; resolved to a commit sha which names the model folder. */
  readonly revision?: string;
  readonly dataDir: string;
  readonly hubUrl?: string;
  /** Hub access token (`hf_…`) for gated or private repos, sent as `Authorization: Bearer`. */
  readonly token?: string;
  readonly signal?: AbortSignal;
  readonly onEvent?: (event: PrepEvent) => void;
  /** Pack the routed experts to INT4 (default true). */
  readonly pack?: boolean;
  /** qpacked-v2 group size; default 32, else 16 or 8: the largest dividing the expert widths. */
  readonly groupSize?: number;
  /** Where to look for an existing huggingface_hub cache; null disables the lookup. Default: HF_HUB_CACHE / HF_HOME. */
  readonly hfCacheDir?: string | null;
  /** Re-hash files already in the data dir instead of trusting their size. */
  readonly verify?: boolean;
  readonly packer?: PackerCommand | PackerLauncher;
  readonly fetch?: typeof fetch;
  /** Network retries per file before failing (default 5) and the first backoff in ms (default 1000). */
  readonly retries?: number;
  readonly backoffMs?: number;
  /** Shards fetched at once (default DEFAULT_DOWNLOADS_AT_ONCE). */
  readonly downloadsAtOnce?: number;
  /** Replaces `fs.statfs` for the free-space check (tests). */
  readonly statfs?: (p: string) => Promise<{ bavail: number | bigint; bsize: number | bigint }>;
};

export type PrepareModelResult = {
  readonly modelDir: string;
  readonly commit: string;
  readonly manifestPath: string;
  readonly packedDir: string | null;
  readonly manifest: PreparedManifest;
};

async function statSize(file: string): Promise<number | undefined> {
  try {
    return (await fs.promises.stat(file)).size;
  } catch {
    return undefined;
  }
}

function matches(digest: FileDigest, f: RepoFile): boolean {
  return digest.size === f.size && (f.sha256 === undefined || digest.sha256 === f.sha256) && (f.gitSha1 === undefined || digest.gitSha1 === f.gitSha1);
}

/**
 * Prepares a model in `<dataDir>/models/<org>--<name>/<commit>`: downloads the needed files (resuming, verifying,
 * reusing the HF cache), checks it is OLMoE with sane shards, packs it to INT4 in a child process, then writes
 * `prepared.json` last. Safe to stop at any point and run again.
 */
export async function prepareModel(opts: PrepareModelOptions): Promise<PrepareModelResult> {
  const repo = opts.repo ?? DEFAULT_MODEL_REPO;
  const revision = opts.revision ?? (opts.repo === undefined ? DEFAULT_MODEL_REVISION : 'main');
  const hubUrl = (opts.hubUrl ?? DEFAULT_HUB_URL).replace(/\/+$/, '');
  const emit = opts.onEvent ?? ((): void => undefined);
  const signal = opts.signal;
  const pack = opts.pack ?? true;
  const authHeaders: Record<string, string> = opts.token ? { Authorization: `Bearer ${opts.token}` } : {};
  const fetchImpl = opts.fetch ?? fetch;

  emit({ type: 'phase', phase: 'resolve', message: `resolving ${repo}@${revision} on ${hubUrl}` });
  const resolved = await resolveRepo({
    repo,
    revision,
    hubUrl,
    fetch: fetchImpl,
    ...(opts.token !== undefined ? { token: opts.token } : {}),
    ...(signal ? { signal } : {}),
    ...(opts.backoffMs !== undefined ? { backoffMs: opts.backoffMs } : {}),
  });
  const commit = resolved.commit;
  const byPath = new Map(resolved.files.map((f) => [f.path, f]));
  for (const name of REQUIRED_FILES) {
    if (!byPath.has(name)) throw new PrepError('MODEL_INVALID', `${repo}@${commit}: the repo has no ${name}`);
  }
  const modelDir = dataLayout.modelDir(opts.dataDir, repo, commit);
  const sourceDir = dataLayout.sourceDir(modelDir);

  const existing = await alreadyPrepared(modelDir, commit, pack, opts.groupSize, opts.verify === true, signal);
  throwIfAborted(signal, `${repo}@${commit}`);
  if (existing) {
    emit({ type: 'done', manifestPath: path.join(modelDir, 'prepared.json'), modelDir, packedDir: existing.packedDir });
    return existing;
  }

  let release: () => Promise<void>;
  try {
    await fs.promises.mkdir(sourceDir, { recursive: true });
    release = await acquirePrepLock(modelDir, `${repo}@${commit}`);
  } catch (error) {
    throw toPrepError(error, sourceDir);
  }
  try {
    return await prepareLocked();
  } finally {
    await release();
  }

  async function prepareLocked(): Promise<PrepareModelResult> {
    const cacheDir = opts.hfCacheDir === null ? undefined : (opts.hfCacheDir ?? hfCacheDir());
    const destOf = (f: RepoFile): string => path.join(sourceDir, ...f.path.split('/'));
    const manifestFile = dataLayout.preparedManifest(modelDir);
    await sweepTempFiles(modelDir, sourceDir);

    // prepared.json describes the source and at most one packed variant. One that still verifies stays until the new
    // one replaces it (a failed request for another variant must not hide a ready model); it goes as soon as a file
    // it lists is found bad or is about to be replaced.
    let kept = await verifiedManifest(modelDir, commit, signal);
    if (!kept) await fs.promises.rm(manifestFile, { force: true });
    const dropKept = async (): Promise<void> => {
      if (!kept) return;
      kept = undefined;
      await fs.promises.rm(manifestFile, { force: true });
    };

    let doneBytes = 0;
    let totalBytes = 0;
    // Bytes so far of each file being fetched or verified (several shards at once).
    const inFlight = new Map<string, number>();
    const meter = new RateMeter();
    let lastEmit = 0;
    const progress = (phase: 'download' | 'verify', file: RepoFile, fileDone: number, force = false): void => {
      inFlight.set(file.path, fileDone);
      const now = Date.now();
      if (!force && now - lastEmit < EMIT_INTERVAL_MS) return;
      lastEmit = now;
      let overall = doneBytes;
      for (const n of inFlight.values()) overall += n;
      const { bytesPerSec, etaSec } = meter.sample(overall, totalBytes);
      emit({
        type: 'progress',
        phase,
        file: file.path,
        ...(inFlight.size > 1 ? { files: [...inFlight.keys()] } : {}),
        fileDoneBytes: fileDone,
        fileTotalBytes: file.size,
        doneBytes: overall,
        totalBytes,
        bytesPerSec,
        etaSec,
      });
    };

    /**
     * `refetch` replaces a copy known to be bad from the HF cache or the Hub, leaving it in place until then. `stop`
     * (the caller's signal unless given) cancels it.
     */
    const acquire = async (f: RepoFile, refetch = false, stop = signal): Promise<PreparedFile> => {
      try {
        return await acquireFile(f, refetch, stop);
      } catch (error) {
        throw toPrepError(error, destOf(f));
      }
    };
    const acquireFile = async (f: RepoFile, refetch: boolean, signal: AbortSignal | undefined): Promise<PreparedFile> => {
      throwIfAborted(signal, f.path);
      const dest = destOf(f);
      const git = f.sha256 === undefined;
      if (!refetch && (await statSize(dest)) === f.size) {
        if (!git && !opts.verify) return done(f, f.sha256!, 'existing');
        const digest = await hashFile(dest, { git, signal });
        if (matches(digest, f)) return done(f, digest.sha256, 'existing');
        emit({ type: 'warning', message: `${f.path}: the copy in ${sourceDir} does not verify; downloading it again` });
        await dropKept();
        await fs.promises.rm(dest, { force: true });
      }
      if (cacheDir) {
        const cached = await findCachedFile(cacheDir, repo, commit, f.path);
        if (cached && (await statSize(cached)) === f.size) {
          let seen = 0;
          const digest = await hashFile(cached, {
            git,
            signal,
            onBytes: (n) => {
              seen += n;
              progress('verify', f, seen);
            },
          });
          if (matches(digest, f)) {
            await placeFromCache(cached, dest);
            return done(f, digest.sha256, 'hf-cache');
          }
          emit({ type: 'warning', message: `${f.path}: the HF cache copy ${cached} does not verify; downloading it instead` });
        }
      }
      const digest = await downloadFile({
        url: `${hubUrl}/${repo}/resolve/${commit}/${f.path.split('/').map(encodeURIComponent).join('/')}`,
        dest,
        label: `${repo}@${commit.slice(0, 12)}/${f.path}`,
        expected: { size: f.size, ...(f.sha256 ? { sha256: f.sha256 } : {}), ...(f.gitSha1 ? { gitSha1: f.gitSha1 } : {}) },
        headers: authHeaders,
        fetch: fetchImpl,
        ...(signal ? { signal } : {}),
        ...(opts.retries !== undefined ? { retries: opts.retries } : {}),
        ...(opts.backoffMs !== undefined ? { backoffMs: opts.backoffMs } : {}),
        onBytes: (n) => progress('download', f, n),
        onRetry: (attempt, delayMs, reason) => emit({ type: 'retry', file: f.path, attempt, delayMs, reason }),
      });
      return done(f, digest.sha256, 'download');
    };
    const done = (f: RepoFile, sha256: string, source: 'download' | 'hf-cache' | 'existing'): PreparedFile => {
      progress(source === 'download' ? 'download' : 'verify', f, f.size, true);
      inFlight.delete(f.path);
      doneBytes += f.size;
      emit({ type: 'file', path: f.path, source, size: f.size, sha256 });
      return { path: f.path, size: f.size, sha256 };
    };

    // Small files first: config.json decides whether this is an OLMoE model before any shard is fetched.
    const metadata = METADATA_FILES.map((n) => byPath.get(n)).filter((f): f is RepoFile => f !== undefined);
    const index = byPath.get(INDEX_FILE);
    const firstWave = [...metadata, ...(index ? [index] : [])];
    totalBytes = firstWave.reduce((a, f) => a + f.size, 0);
    emit({ type: 'phase', phase: 'download', message: `fetching ${repo}@${commit}` });
    const prepared: PreparedFile[] = [];
    let config: OlmoeConfig | undefined;
    try {
      for (const f of firstWave) {
        prepared.push(await acquire(f));
        if (f.path === 'config.json') config = parseOlmoeConfig(await fs.promises.readFile(destOf(f), 'utf8'), `${repo}@${commit.slice(0, 12)}/config.json`);
      }
    } catch (error) {
      throw toPrepError(error, repo);
    }
    const shards = await selectShards(resolved.files, index ? destOf(index) : undefined, `${repo}@${commit.slice(0, 12)}`);
    const wanted = [...firstWave, ...shards];
    totalBytes = wanted.reduce((a, f) => a + f.size, 0);
    emit({ type: 'resolved', repo, commit, files: wanted.map((f) => ({ path: f.path, size: f.size })), totalBytes });

    const groupSize = opts.groupSize ?? defaultGroupSize(config!);
    const packedDir = dataLayout.packedDir(modelDir, groupSize);
    let packDone: PackContents | undefined;
    try {
      packDone = pack ? await completePack(packedDir, commit, groupSize, opts.verify === true, signal) : undefined;
    } catch (error) {
      throw toPrepError(error, packedDir);
    }
    const sourceDev = (await fs.promises.stat(sourceDir)).dev;
    let remaining = 0;
    for (const f of shards) {
      if ((await statSize(destOf(f))) === f.size) continue;
      // A cached shard is hard-linked at no cost on the same device, but copied from another one.
      const cached = cacheDir ? await findCachedFile(cacheDir, repo, commit, f.path) : undefined;
      const cachedStat = cached ? await fs.promises.stat(cached).catch(() => undefined) : undefined;
      if (cachedStat?.size === f.size && cachedStat.dev === sourceDev) continue;
      remaining += cachedStat?.size === f.size ? f.size : Math.max(0, f.size - ((await statSize(`${destOf(f)}.part`)) ?? 0));
    }
    const packBytes = pack && !packDone ? Math.ceil(shards.reduce((a, f) => a + f.size, 0) * PACKED_SIZE_RATIO) : 0;
    await assertFreeSpace(modelDir, remaining + packBytes, `${repo}@${commit.slice(0, 12)} (download and INT4 pack)`, opts.statfs);

    const experts = new Set<string>();
    const checkShard = async (f: RepoFile): Promise<void> => {
      const label = `${repo}@${commit.slice(0, 12)}/${f.path}`;
      const { shapes } = await checkSafetensorsFile(destOf(f), label);
      for (const name of checkMoeTensorShapes(config!, shapes, label)) experts.add(name);
    };
    try {
      const got: PreparedFile[] = [];
      await atOnce(shards, opts.downloadsAtOnce ?? DEFAULT_DOWNLOADS_AT_ONCE, signal, async (f, i, stop) => {
        got[i] = await acquire(f, false, stop);
        await checkShard(f);
      });
      prepared.push(...got);
      checkAllExpertTensors(config!, experts, `${repo}@${commit.slice(0, 12)}`);
    } catch (error) {
      throw toPrepError(error, repo);
    }

    let packSection: PreparedManifest['pack'] = null;
    if (pack) {
      emit({ type: 'phase', phase: 'pack', message: `packing routed experts to INT4 (group size ${groupSize})` });
      const packManifest = path.join(packedDir, PACKED_MANIFEST);
      const unverified = (sources: readonly PreparedFile[]): SourceMismatch[] => packSourceMismatches(sources, prepared, wanted, shards, `${repo}@${commit}`);
      // A pack counts only when the packer read exactly the verified source bytes.
      if (packDone && unverified(packDone.sources).length > 0) packDone = undefined;
      const packOnce = async (): Promise<PackContents> => {
        if (kept?.pack?.dir === path.basename(packedDir)) await dropKept();
        // maxRetries: on Windows a file of the old pack that a scanner holds a moment (EBUSY/EPERM) is retried.
        await fs.promises.rm(packedDir, { recursive: true, force: true, maxRetries: 5 });
        // One meter a phase: the hash phase's bytes (the early-hashed shards first) are not the pack's.
        let meterPhase: string | null = null;
        let packMeter = new RateMeter();
        let lastPackEmit = 0;
        await runPacker({
          source: sourceDir,
          out: packedDir,
          repo,
          commit,
          groupSize,
          ...(signal ? { signal } : {}),
          ...(opts.packer ? { packer: opts.packer } : {}),
          onProgress: (p) => {
            const now = Date.now();
            if (p.phase !== meterPhase) {
              meterPhase = p.phase;
              packMeter = new RateMeter();
              lastPackEmit = 0;
            }
            if (now - lastPackEmit < EMIT_INTERVAL_MS && p.doneBytes < p.totalBytes) return;
            lastPackEmit = now;
            const { bytesPerSec, etaSec } = packMeter.sample(p.doneBytes, p.totalBytes);
            emit({ type: 'progress', phase: p.phase, doneBytes: p.doneBytes, totalBytes: p.totalBytes, bytesPerSec, etaSec });
          },
        });
        const contents = await completePack(packedDir, commit, groupSize);
        if (!contents) throw new PrepError('INTERNAL', `${packedDir}: the packer exited but its horizon-manifest.json is missing or does not verify`);
        return contents;
      };
      let contents = packDone;
      if (!contents) {
        contents = await packOnce();
        let bad = unverified(contents.sources);
        // Copies trusted by their size were changed after they were verified: fetch them again and pack once more.
        if (bad.length > 0 && bad.every((b) => b.file !== undefined)) {
          await fs.promises.rm(packManifest, { force: true });
          await dropKept();
          try {
            for (const { file: f, problem } of bad) {
              emit({ type: 'warning', message: `${problem}; fetching it again` });
              totalBytes += f!.size;
              const fresh = await acquire(f!, true);
              prepared.splice(prepared.findIndex((p) => p.path === f!.path), 1, fresh);
              if (shards.includes(f!)) await checkShard(f!);
            }
          } catch (error) {
            throw toPrepError(error, repo);
          }
          contents = await packOnce();
          bad = unverified(contents.sources);
        }
        if (bad.length > 0) {
          await fs.promises.rm(packManifest, { force: true });
          throw new PrepError('HASH_MISMATCH', `${packedDir}: the packer read source files that do not verify: ${bad.map((b) => b.problem).join('; ')}`);
        }
      }
      packSection = { dir: path.basename(packedDir), format: QPACKED_FORMAT, groupSize, files: contents.files };
    }

    emit({ type: 'phase', phase: 'manifest', message: 'writing prepared.json' });
    const manifest: PreparedManifest = {
      format: 'horizon-prepared-v1',
      repo,
      revision,
      commit,
      hubUrl,
      source: { dir: path.basename(sourceDir), files: [...prepared].sort((a, b) => a.path.localeCompare(b.path)) },
      pack: packSection,
      tool: 'horizon-runmap',
      toolVersion: toolVersion(),
      createdAt: new Date().toISOString(),
    };
    let manifestPath: string;
    try {
      manifestPath = await writePreparedManifest(modelDir, manifest);
      await rememberVerified(modelDir, manifest);
    } catch (error) {
      throw toPrepError(error, path.join(modelDir, 'prepared.json'));
    }
    const result = { modelDir, commit, manifestPath, packedDir: pack ? packedDir : null, manifest };
    emit({ type: 'done', manifestPath, modelDir, packedDir: result.packedDir });
    return result;
  }
}

/**
 * `run` over `items`, at most `limit` at a time, in order of start. The first failure stops the others through the
 * signal `run` gets (a download keeps its part) and is thrown once every one has stopped, so nothing is left writing
 * when this returns; the caller's cancel is thrown as a cancel.
 */
async function atOnce<T>(
  items: readonly T[],
  limit: number,
  signal: AbortSignal | undefined,
  run: (item: T, index: number, stop: AbortSignal) => Promise<void>,
): Promise<void> {
  const stop = new AbortController();
  const onAbort = (): void => stop.abort(signal?.reason);
  signal?.addEventListener('abort', onAbort, { once: true });
  if (signal?.aborted) onAbort();
  let next = 0;
  let failure: { error: unknown } | undefined;
  const worker = async (): Promise<void> => {
    while (next < items.length && !stop.signal.aborted) {
      const i = next++;
      try {
        await run(items[i]!, i, stop.signal);
      } catch (error) {
        failure ??= { error };
        stop.abort(error);
      }
    }
  };
  try {
    await Promise.all(Array.from({ length: Math.max(1, Math.min(limit, items.length)) }, worker));
  } finally {
    signal?.removeEventListener('abort', onAbort);
  }
  if (failure) throw failure.error;
  throwIfAborted(signal, 'download');
}

/** The model's prepared.json when it exists, reads and is for `commit`. */
async function manifestFor(modelDir: string, commit: string): Promise<PreparedManifest | undefined> {
  if (!fs.existsSync(dataLayout.preparedManifest(modelDir))) return undefined;
  try {
    const manifest = await readPreparedManifest(modelDir);
    return manifest.commit === commit ? manifest : undefined;
  } catch {
    return undefined;
  }
}

async function alreadyPrepared(
  modelDir: string,
  commit: string,
  pack: boolean,
  groupSize: number | undefined,
  rehash: boolean,
  signal: AbortSignal | undefined,
): Promise<PrepareModelResult | undefined> {
  const manifest = await manifestFor(modelDir, commit);
  if (!manifest) return undefined;
  if (pack && (manifest.pack === null || (groupSize !== undefined && manifest.pack.groupSize !== groupSize))) return undefined;
  try {
    if ((await verifyPreparedFiles(modelDir, manifest, rehash, signal)).length > 0) return undefined;
  } catch (error) {
    if (error instanceof PrepError && error.code === 'CANCELLED') throw error;
    return undefined;
  }
  const packedDir = pack && manifest.pack ? path.join(modelDir, manifest.pack.dir) : null;
  return { modelDir, commit, manifestPath: dataLayout.preparedManifest(modelDir), packedDir, manifest };
}

/** The model's prepared.json when it is for `commit` and its files have their recorded sizes. */
async function verifiedManifest(modelDir: string, commit: string, signal: AbortSignal | undefined): Promise<PreparedManifest | undefined> {
  const manifest = await manifestFor(modelDir, commit);
  if (!manifest) return undefined;
  return (await verifyPreparedFiles(modelDir, manifest, false, signal)).length === 0 ? manifest : undefined;
}

/**
 * Removes `<name>.tmp-<pid>` files that a process which has died (or this one, earlier) left in the model folder and
 * its source folder: a crash while copying a shard from the HF cache would otherwise keep a shard-sized file for good.
 * Called under the model's lock, so no live preparation is writing them.
 */
async function sweepTempFiles(modelDir: string, sourceDir: string): Promise<void> {
  const sweep = async (dir: string, recurse: boolean): Promise<void> => {
    let entries: fs.Dirent[];
    try {
      entries = await fs.promises.readdir(dir, { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries) {
      const abs = path.join(dir, e.name);
      if (e.isDirectory()) {
        if (recurse) await sweep(abs, true);
        continue;
      }
      const pid = Number(/\.tmp-(\d+)$/.exec(e.name)?.[1]);
      if (Number.isInteger(pid) && pid > 0 && (pid === process.pid || !processAlive(pid))) await fs.promises.rm(abs, { force: true });
    }
  };
  try {
    await sweep(modelDir, false);
    await sweep(sourceDir, true);
  } catch (error) {
    throw toPrepError(error, sourceDir);
  }
}

async function placeFromCache(cached: string, dest: string): Promise<void> {
  const tmp = `${dest}.tmp-${process.pid}`;
  await fs.promises.rm(tmp, { force: true });
  try {
    try {
      await fs.promises.link(cached, tmp);
    } catch {
      await fs.promises.copyFile(cached, tmp, fs.constants.COPYFILE_FICLONE);
      await syncFile(tmp);
    }
    await renameDurably(tmp, dest);
  } catch (error) {
    await fs.promises.rm(tmp, { force: true });
    throw error;
  }
}

async function selectShards(files: readonly RepoFile[], indexPath: string | undefined, label: string): Promise<RepoFile[]> {
  const byPath = new Map(files.map((f) => [f.path, f]));
  if (indexPath) {
    let weightMap: Record<string, unknown>;
    try {
      weightMap = (JSON.parse(await fs.promises.readFile(indexPath, 'utf8')) as { weight_map?: Record<string, unknown> }).weight_map ?? {};
    } catch (error) {
      throw new PrepError('MODEL_INVALID', `${label}/${INDEX_FILE}: not valid JSON (${(error as Error).message})`);
    }
    const names = [...new Set(Object.values(weightMap).map(String))].sort();
    if (names.length === 0) throw new PrepError('MODEL_INVALID', `${label}/${INDEX_FILE}: empty weight_map`);
    return names.map((n) => {
      const f = byPath.get(n);
      if (!f) throw new PrepError('MODEL_INVALID', `${label}/${INDEX_FILE}: names shard ${n}, which the repo does not have`);
      return f;
    });
  }
  const shards = files.filter((f) => !f.path.includes('/') && f.path.endsWith('.safetensors')).sort((a, b) => a.path.localeCompare(b.path));
  if (shards.length === 0) throw new PrepError('MODEL_INVALID', `${label}: the repo has no .safetensors weights`);
  return shards;
}

/** A packed folder's files, and the source files its packer read with the sha256 it hashed them to. */
type PackContents = { readonly files: PreparedFile[]; readonly sources: PreparedFile[] };

/** One source file the packer read that is not the verified file: `file` is the repo file to fetch again, if any. */
type SourceMismatch = { readonly problem: string; readonly file: RepoFile | undefined };

/** How the sources a packer read differ from the verified source files; every shard must be among them. */
function packSourceMismatches(
  sources: readonly PreparedFile[],
  verified: readonly PreparedFile[],
  wanted: readonly RepoFile[],
  shards: readonly RepoFile[],
  where: string,
): SourceMismatch[] {
  const byPath = new Map(verified.map((f) => [f.path, f]));
  const repoFiles = new Map(wanted.map((f) => [f.path, f]));
  const out: SourceMismatch[] = [];
  for (const s of sources) {
    const v = byPath.get(s.path);
    if (!v) out.push({ problem: `source/${s.path} is not a file of ${where}`, file: undefined });
    else if (s.sha256 !== v.sha256 || s.size !== v.size) {
      out.push({ problem: `source/${s.path} had sha256 ${s.sha256} when packed, expected ${v.sha256}`, file: repoFiles.get(s.path) });
    }
  }
  const read = new Set(sources.map((s) => s.path));
  for (const f of shards) if (!read.has(f.path)) out.push({ problem: `source/${f.path} is not among the sources the packer recorded`, file: undefined });
  return out;
}

/**
 * The packed folder's contents when its horizon-manifest.json exists, matches, and every output has its recorded size
 * (and sha256 too when `rehash`).
 */
async function completePack(
  packedDir: string,
  commit: string,
  groupSize: number,
  rehash = false,
  signal?: AbortSignal,
): Promise<PackContents | undefined> {
  const manifestFile = path.join(packedDir, PACKED_MANIFEST);
  let m: { format?: unknown; group_size?: unknown; codebook?: unknown; source?: { revision?: unknown; files?: unknown }; outputs?: unknown };
  try {
    m = JSON.parse(await fs.promises.readFile(manifestFile, 'utf8')) as typeof m;
  } catch {
    return undefined;
  }
  if (m.format !== QPACKED_FORMAT || m.codebook !== QPACKED_CODEBOOK || Number(m.group_size) !== groupSize) return undefined;
  if (m.source?.revision != null && m.source.revision !== commit) return undefined;
  if (!Array.isArray(m.outputs)) return undefined;
  const isFile = (o: { path?: unknown; size?: unknown; sha256?: unknown }): o is PreparedFile =>
    typeof o?.path === 'string' && typeof o.sha256 === 'string' && typeof o.size === 'number';
  const sources = Array.isArray(m.source?.files) ? (m.source.files as PreparedFile[]) : [];
  if (!sources.every(isFile)) return undefined;
  const files: PreparedFile[] = [];
  for (const o of m.outputs as { path?: unknown; size?: unknown; sha256?: unknown }[]) {
    if (!isFile(o)) return undefined;
    if ((await statSize(path.join(packedDir, o.path))) !== o.size) return undefined;
    if (rehash && (await hashFile(path.join(packedDir, o.path), signal ? { signal } : {})).sha256 !== o.sha256) return undefined;
    files.push({ path: o.path, size: o.size, sha256: o.sha256 });
  }
  const listed = new Set(files.map((f) => f.path));
  for (const name of (await fs.promises.readdir(packedDir)).sort()) {
    if (listed.has(name) || name.includes('.tmp')) continue;
    const abs = path.join(packedDir, name);
    if (!(await fs.promises.stat(abs)).isFile()) continue;
    const digest = await hashFile(abs);
    files.push({ path: name, size: digest.size, sha256: digest.sha256 });
  }
  return { files: files.sort((a, b) => a.path.localeCompare(b.path)), sources: sources.map((f) => ({ path: f.path, size: f.size, sha256: f.sha256 })) };
}
