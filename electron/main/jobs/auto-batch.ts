/**
 * The batch a run uses when none is asked for. On a GPU, decode throughput grows with the number of sequences
 * generated together (each expert's weights are read once per step for all of them), so a run takes the largest
 * batch whose KV cache fits beside the whole model; the CPU backend takes DEFAULT_BATCH (RUN_BATCH.cpuDefault).
 */
import { readdir, stat } from 'node:fs/promises';
import path from 'node:path';

import { RUN_BATCH } from '../../common/run-settings.js';
import type { DeviceProbe } from '../../common/worker-protocol.js';
import { probedDevice } from '../../common/worker-protocol.js';
import type { PromptRecord } from '../../../evals/ifeval/types.js';
import { DEFAULT_BATCH, DEFAULT_MAX_NEW_TOKENS } from './eval-run.js';
import type { RuntimeClient } from './eval-run.js';
import type { ModelSource } from './model-source.js';
import { readJsonObject } from './model-source.js';
import { runContextTokens } from './run-context.js';

/** Largest first; 64 is the most sequences the CUDA backend replays as one decode graph. */
export const GPU_BATCHES = [64, 48, 32, 24, 16, 12, 8, 6, 4, 2, 1] as const;
/** Kept free on the GPU for the CUDA context, scratch buffers and other programs (a desktop's display, say). */
export const GPU_RESERVE_BYTES = 1.5 * 2 ** 30;
/** Share of the GPU's memory a run plans with, since other programs may take more while it runs. */
export const GPU_USABLE_SHARE = 0.9;
/** Kept out of the memory found free for the backend's scratch buffers and decode graphs. */
export const GPU_FREE_RESERVE_BYTES = 0.75 * 2 ** 30;

export interface BatchSizing {
  /** Memory of the GPU the run will use; null when it runs on the CPU. */
  readonly gpuMemoryBytes: number | null;
  /** Of that, what a model load can use now (other programs' use, a display's say, left out). */
  readonly gpuFreeBytes: number;
  /** Bytes of the model's weights on the GPU (the packed folder's tensors). */
  readonly weightBytes: number;
  /** K and V bytes one token of one sequence holds over all layers (FP16). */
  readonly kvBytesPerToken: number;
  /** KV room per sequence the run reserves (longest prompt plus the new-token budget). */
  readonly contextTokens: number;
}

/**
 * The largest of GPU_BATCHES whose KV cache fits in the GPU beside every weight, so that all experts stay resident:
 * in the share of the device a run plans with, and in what is free now. When not even one sequence fits beside them,
 * only part of the experts can be resident whatever the batch, and RUN_BATCH.gpuFallback shares each step's expert
 * copies among several sequences. DEFAULT_BATCH on the CPU.
 */
export function chooseBatch(s: BatchSizing): number {
  if (s.gpuMemoryBytes === null) return DEFAULT_BATCH;
  const usable = Math.min(
    s.gpuMemoryBytes * GPU_USABLE_SHARE - GPU_RESERVE_BYTES,
    s.gpuFreeBytes - GPU_FREE_RESERVE_BYTES,
  );
  const room = usable - s.weightBytes;
  const perSequence = s.kvBytesPerToken * s.contextTokens;
  for (const b of GPU_BATCHES) if (b * perSequence <= room) return b;
  return RUN_BATCH.gpuFallback;
}

/** FP16 K and V of one token over all layers, from config.json; null when the config lacks the sizes. */
export async function kvBytesPerToken(modelDir: string): Promise<number | null> {
  const c = await readJsonObject(path.join(modelDir, 'config.json'));
  const int = (k: string): number | null => {
    const v = c?.[k];
    return typeof v === 'number' && Number.isInteger(v) && v > 0 ? v : null;
  };
  const layers = int('num_hidden_layers');
  const heads = int('num_attention_heads');
  const hidden = int('hidden_size');
  const kvHeads = int('num_key_value_heads') ?? heads;
  const headDim = int('head_dim') ?? (hidden !== null && heads !== null ? hidden / heads : null);
  if (layers === null || kvHeads === null || headDim === null) return null;
  return 2 * layers * kvHeads * headDim * 2;
}

async function tensorBytes(dir: string): Promise<number> {
  let total = 0;
  for (const name of await readdir(dir)) {
    if (name.endsWith('.safetensors')) total += (await stat(path.join(dir, name))).size;
  }
  return total;
}

/**
 * The batch for a run of `source` that asked for none: sized for the GPU the worker would load it on (the CUDA
 * backend runs INT4 models), DEFAULT_BATCH when it would run on the CPU, RUN_BATCH.gpuFallback when the GPU's sizes
 * cannot be read from the model.
 */
export async function autoBatch(opts: {
  readonly source: ModelSource;
  readonly requestedBackend: 'auto' | 'cpu' | 'cuda';
  readonly cudaDevice?: number;
  readonly probe: () => Promise<DeviceProbe | null>;
  readonly contextTokens: () => Promise<number>;
}): Promise<number> {
  const { source } = opts;
  if (opts.requestedBackend === 'cpu' || source.weights !== 'int4' || source.packedDir === null) return DEFAULT_BATCH;
  const probe = await opts.probe();
  const device = probe ? probedDevice(probe, opts.cudaDevice) : undefined;
  if (!device) return DEFAULT_BATCH;
  const kv = await kvBytesPerToken(source.modelDir);
  if (kv === null) return RUN_BATCH.gpuFallback;
  return chooseBatch({
    gpuMemoryBytes: device.vramBytes,
    gpuFreeBytes: device.freeVramBytes,
    weightBytes: await tensorBytes(source.packedDir),
    kvBytesPerToken: kv,
    contextTokens: await opts.contextTokens(),
  });
}

/** The worker's device probe; null when it cannot answer. */
export async function probeDevices(runtime: Pick<RuntimeClient, 'request' | 'state' | 'restart'>): Promise<DeviceProbe | null> {
  // A worker that crashed (a device fault ends it) would answer nothing, and the run would get the CPU's batch.
  if (runtime.state === 'crashed' && !(await runtime.restart()).ok) return null;
  const r = await runtime.request({ type: 'probe' });
  return r.ok ? r.value : null;
}

/** `autoBatch` for a run about to be created with `createEvalRun`: the worker probes the devices. */
export function autoBatchForRun(
  runtime: Pick<RuntimeClient, 'request' | 'state' | 'restart'>,
  records: readonly PromptRecord[],
  req: { readonly source: ModelSource; readonly backend?: 'auto' | 'cpu' | 'cuda'; readonly cudaDevice?: number; readonly limit?: number; readonly maxNewTokens?: number },
): Promise<number> {
  return autoBatch({
    source: req.source,
    requestedBackend: req.backend ?? 'auto',
    ...(req.cudaDevice !== undefined ? { cudaDevice: req.cudaDevice } : {}),
    probe: () => probeDevices(runtime),
    contextTokens: () =>
      runContextTokens(
        req.source.modelDir,
        records.slice(0, req.limit ?? records.length).map((r) => r.prompt),
        req.maxNewTokens ?? DEFAULT_MAX_NEW_TOKENS,
      ),
  });
}
