import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';

import type { WeightsFormat } from '../../common/ipc-contract.js';
import { stopTokenIds, tokenizerJsonIdOf } from '../../common/stop-tokens.js';
import { hashFile } from '../../node/file-hasher.js';
import { checkPackedFolder, checkPreparedModel, PACKED_MANIFEST, type IntegrityOptions } from '../prep/model-integrity.js';
import { PREPARED_MANIFEST } from '../prep/prepared-manifest.js';

/** Everything a run records about its model and needs to load it. */
export interface ModelSource {
  /** Stable id, e.g. "allenai--OLMoE-1B-7B-0924-Instruct@7f1c97f/int4-g32" or "local:tiny/int4-g32". */
  readonly modelId: string;
  readonly repo: string;
  readonly revision: string;
  /** Checkpoint folder: config.json, tokenizer files, BF16 safetensors. */
  readonly modelDir: string;
  /** qpacked-v2 folder for int4, null for bf16. */
  readonly packedDir: string | null;
  readonly weights: WeightsFormat;
  /** The manifest as JSON text: prepared.json, or a listing of the folder's files for an unprepared checkpoint. */
  readonly manifestJson: string;
  readonly manifestSha256: string;
}

const sha256 = (b: Buffer | string) => createHash('sha256').update(b).digest('hex');

/**
 * The folder the native runtime loads for `dir` and the weights it holds: a prepared model (its INT4 pack, else its
 * source), a packed folder (INT4), or a checkpoint folder (its int4-gN/ pack, else its BF16 weights). `weights`
 * chooses where both exist; throws naming the folder when it asks for what is not there, and naming the file when
 * the model does not match what its manifests record (model-integrity.ts).
 */
export async function resolveRuntimeDir(dir: string, weights?: WeightsFormat, opts: IntegrityOptions = {}): Promise<{ dir: string; weights: WeightsFormat }> {
  const abs = path.resolve(dir);
  if (existsSync(path.join(abs, PREPARED_MANIFEST))) {
    const manifest = await checkPreparedModel(abs, opts);
    const packed = manifest.pack ? path.join(abs, manifest.pack.dir) : null;
    if (weights === 'int4' && !packed) throw new Error(`${abs}: prepared without INT4 packing; use --weights bf16 or prepare it again`);
    return packed && weights !== 'bf16' ? { dir: packed, weights: 'int4' } : { dir: path.join(abs, manifest.source.dir), weights: 'bf16' };
  }
  const runtime = await checkpointRuntimeDir(abs, weights);
  if (runtime.weights === 'int4') await checkPackedFolder(runtime.dir, opts);
  return runtime;
}

/**
 * For a folder without prepared.json: a packed folder on its own (it carries the checkpoint's config and tokenizer
 * files, so it runs as it is), or a checkpoint folder with its int4-gN/ pack, else its BF16 weights.
 */
async function checkpointRuntimeDir(abs: string, weights?: WeightsFormat): Promise<{ dir: string; weights: WeightsFormat }> {
  if (!existsSync(path.join(abs, 'config.json'))) {
    throw new Error(`${abs}: not a model folder (neither ${PREPARED_MANIFEST} nor config.json)`);
  }
  if (existsSync(path.join(abs, PACKED_MANIFEST))) {
    if (weights === 'bf16') {
      throw new Error(`${abs}: an INT4 packed folder (${PACKED_MANIFEST}) holds no BF16 weights; use --weights int4 or give its checkpoint folder`);
    }
    return { dir: abs, weights: 'int4' };
  }
  const packed = await findPackedDir(abs);
  if (weights === 'int4' && !packed) throw new Error(`${abs}: no int4-gN/ packed folder; pack it first or use --weights bf16`);
  return packed && weights !== 'bf16' ? { dir: packed, weights: 'int4' } : { dir: abs, weights: 'bf16' };
}

async function findPackedDir(dir: string): Promise<string | null> {
  const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
  const packed = entries.filter((e) => e.isDirectory() && /^int4-g\d+$/.test(e.name)).map((e) => e.name).sort();
  return packed[0] ? path.join(dir, packed[0]) : null;
}

/**
 * Resolves `dir` as a prepared model (has prepared.json) or a plain checkpoint folder (has config.json, optionally
 * an `int4-gN/` packed folder inside). Throws naming the folder when it is neither or lacks the requested weights.
 */
export async function resolveModelSource(dir: string, weights: WeightsFormat, opts: IntegrityOptions = {}): Promise<ModelSource> {
  const abs = path.resolve(dir);
  if (existsSync(path.join(abs, PREPARED_MANIFEST))) {
    const manifest = await checkPreparedModel(abs, opts);
    const text = await readFile(path.join(abs, PREPARED_MANIFEST));
    const packedDir = manifest.pack ? path.join(abs, manifest.pack.dir) : null;
    if (weights === 'int4' && !packedDir) throw new Error(`${abs}: prepared without INT4 packing; use --weights bf16 or prepare it again`);
    const suffix = weights === 'int4' ? `int4-g${manifest.pack?.groupSize ?? 0}` : 'bf16';
    return {
      modelId: `${manifest.repo.split('/').join('--')}@${manifest.commit.slice(0, 7)}/${suffix}`,
      repo: manifest.repo,
      revision: manifest.commit,
      modelDir: path.join(abs, manifest.source.dir),
      packedDir: weights === 'int4' ? packedDir : null,
      weights,
      manifestJson: text.toString('utf8'),
      manifestSha256: sha256(text),
    };
  }
  const runtime = await checkpointRuntimeDir(abs, weights);
  const packedDir = runtime.weights === 'int4' ? runtime.dir : null;
  const files: { path: string; size: number; sha256: string }[] = [];
  const walk = async (d: string): Promise<void> => {
    for (const e of (await readdir(d, { withFileTypes: true })).sort((a, b) => (a.name < b.name ? -1 : 1))) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) await walk(p);
      else if (e.isFile()) {
        // Streamed: checkpoint shards are gigabytes, past what readFile can hold in one Buffer.
        const { size, sha256: digest } = await hashFile(p);
        files.push({ path: path.relative(abs, p).split(path.sep).join('/'), size, sha256: digest });
      }
    }
  };
  await walk(abs);
  if (packedDir) {
    // Every file was hashed for the listing: the packed outputs are checked against those digests, not hashed twice.
    const prefix = path.relative(abs, packedDir).split(path.sep).join('/');
    const digests = new Map(files.filter((f) => prefix === '' || f.path.startsWith(`${prefix}/`)).map((f) => [prefix === '' ? f.path : f.path.slice(prefix.length + 1), f.sha256]));
    await checkPackedFolder(packedDir, { ...opts, digests });
  }
  const manifestJson = `${JSON.stringify({ format: 'horizon-local-v1', dir: abs, files }, null, 2)}\n`;
  const name = path.basename(abs);
  return {
    modelId: `local:${name}/${packedDir ? path.basename(packedDir) : 'bf16'}`,
    repo: `local/${name}`,
    revision: sha256(manifestJson).slice(0, 40),
    modelDir: abs,
    packedDir,
    weights,
    manifestJson,
    manifestSha256: sha256(manifestJson),
  };
}

/** A JSON file's top-level object, or undefined when it is missing, unreadable or not an object. */
export async function readJsonObject(file: string): Promise<Record<string, unknown> | undefined> {
  try {
    const v: unknown = JSON.parse(await readFile(file, 'utf8'));
    return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The EOS ids generation stops at: config.json and generation_config.json `eos_token_id`, plus the id of
 * tokenizer_config.json's `eos_token` in tokenizer.json; the same set the worker's tokenizer reports.
 */
export async function readStopTokenIds(modelDir: string): Promise<number[]> {
  const [config, generationConfig, tokenizerConfig, tokenizer] = await Promise.all(
    ['config.json', 'generation_config.json', 'tokenizer_config.json', 'tokenizer.json'].map((f) => readJsonObject(path.join(modelDir, f))),
  );
  return stopTokenIds(modelDir, { config, generationConfig, tokenizerConfig }, tokenizerJsonIdOf(tokenizer));
}

/**
 * Before a stored run continues: its model must still be the one it started with. A prepared model's prepared.json
 * must hash to what the run recorded and its files pass checkPreparedModel; a plain folder's listing (every file's
 * sha256) must come out the same. Throws naming the folder and what changed.
 */
export async function checkRecordedModel(
  run: { readonly modelDir: string; readonly weights: WeightsFormat; readonly manifestJson: string; readonly manifestSha256: string },
  opts: IntegrityOptions = {},
): Promise<void> {
  let recorded: { format?: unknown; dir?: unknown; source?: { dir?: unknown } };
  try {
    recorded = JSON.parse(run.manifestJson) as typeof recorded;
  } catch {
    throw new Error(`the run's stored model manifest is not JSON`);
  }
  if (recorded.format === 'horizon-local-v1' && typeof recorded.dir === 'string') {
    const now = await resolveModelSource(recorded.dir, run.weights, opts);
    if (now.manifestSha256 !== run.manifestSha256) throw new Error(`${recorded.dir}: the model's files changed since this run started; start a new run`);
    return;
  }
  const preparedDir = path.dirname(run.modelDir);
  let text: Buffer;
  try {
    text = await readFile(path.join(preparedDir, PREPARED_MANIFEST));
  } catch {
    throw new Error(`${path.join(preparedDir, PREPARED_MANIFEST)}: missing; the model this run used is gone`);
  }
  if (sha256(text) !== run.manifestSha256) {
    throw new Error(`${path.join(preparedDir, PREPARED_MANIFEST)}: changed since this run started (the model was prepared again); start a new run`);
  }
  await checkPreparedModel(preparedDir, opts);
}

/**
 * Why a stored run cannot be resumed, the same for the app and `horizon eval --resume`: it is complete, it read
 * another input_data.jsonl than the one at hand, or its model changed (checkRecordedModel). Null when it can.
 */
export async function resumeProblem(
  run: Parameters<typeof checkRecordedModel>[0] & {
    readonly id: string;
    readonly status: string;
    readonly datasetSha256: string;
    readonly imported: { readonly file: string } | null;
  },
  datasetSha256: string,
  opts: IntegrityOptions = {},
): Promise<{ readonly code: 'COMPLETE' | 'IMPORTED' | 'OTHER_DATASET' | 'MODEL_CHANGED'; readonly message: string } | null> {
  if (run.status === 'completed') return { code: 'COMPLETE', message: `run ${run.id} is already complete` };
  if (run.imported) {
    return {
      code: 'IMPORTED',
      message: `run ${run.id} was imported from ${run.imported.file}: it was made on another machine, and its model is not here to resume with`,
    };
  }
  if (run.datasetSha256 !== datasetSha256) {
    return { code: 'OTHER_DATASET', message: `run ${run.id} used input_data.jsonl ${run.datasetSha256}, the data folder has ${datasetSha256}` };
  }
  try {
    await checkRecordedModel(run, opts);
  } catch (e) {
    return { code: 'MODEL_CHANGED', message: `run ${run.id} cannot be resumed: ${(e as Error).message}` };
  }
  return null;
}
