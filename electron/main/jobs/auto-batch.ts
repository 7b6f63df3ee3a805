/**
 * The batch a run uses when none is asked for: the largest whose worst-case KV cache (every sequence at the run's
 * longest context) fits in memory beside the model's weights. On a GPU, decode throughput grows with the number of
 * sequences generated together (each expert's weights are read once per step for all of them), and all experts stay
 * resident. The CPU backend's INT4 kernels likewise share each unpack of the weights among the tokens an expert gets,
 * and its KV cache lives in host memory, so host memory sizes it.
 */
import { readdir, stat } from 'node:fs/promises';
import os from 'node:os';
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

const GIB = 2 ** 30;

/** How a run plans memory on one kind of device. */
export interface MemoryPlan {
  /** Candidate batches, largest first. */
  readonly batches: readonly number[];
  /** Share of the device's memory a run plans with, since other programs may take more while it runs. */
  readonly usableShare: number;
  /** Kept out of that share for what the run itself needs beside weights and KV. */
  readonly reserveBytes: number;
  /** Kept out of the memory found free now. */
  readonly freeReserveBytes: number;
  /** The batch when not even one sequence fits beside the weights. */
  readonly noRoom: number;
}

/**
 * GPU: 64 is the most sequences the CUDA backend replays as one decode graph. The reserve holds the CUDA context,
 * scratch buffers and other programs (a desktop's display, say); the free reserve the backend's scratch buffers and
 * decode graphs. When the weights leave no room for a sequence, only part of the experts can be resident whatever the
 * batch, and RUN_BATCH.gpuFallback shares each step's expert copies among several sequences.
 */
export const GPU_PLAN: MemoryPlan = {
  batches: [64, 48, 32, 24, 16, 12, 8, 6, 4, 2, 1],
  usableShare: 0.9,
  reserveBytes: 1.5 * GIB,
  freeReserveBytes: 0.75 * GIB,
  noRoom: RUN_BATCH.gpuFallback,
};

/**
 * CPU: at most 16. More sequences share each unpack of an expert's weights among more tokens, which pays where the
 * weights' bytes bound the INT4 kernels (the VNNI paths: CPU_VNNI_PLAN) but not on AVX2, where the kernels are
 * bound by their arithmetic: on a two-core AMD EPYC, three alternated runs each gave 34-44 tok/s at 16 and 38-43 at
 * 32. Fewer when the host's memory is short, rather than swapping: OLMoE holds 128 KB of KV a token, so 16 sequences
 * of IFEval's longest context take about 3.6 GB beside 4.5 GB of weights. The share and reserve leave the operating
 * system, the app's windows and the worker's scratch their room.
 */
export const CPU_PLAN: MemoryPlan = {
  batches: [16, 12, 8, 6, 4, 2, 1],
  usableShare: 0.75,
  reserveBytes: 2 * GIB,
  freeReserveBytes: 1 * GIB,
  noRoom: 1,
};

/**
 * CPU, INT4 experts on the VNNI kernels (`dpbusd`: AVX-512 VNNI, or AVX-VNNI's 256-bit form): at most 32. Two cores
 * of an AMD EPYC with AVX-512 VNNI decoded the full-size OLMoE at 55 / 62 / 66-80 tok/s at 8 / 16 / 32; two of an Intel
 * Xeon, alternated, 52-54 tok/s at 16 and 66-67 at 32 on AVX-512 VNNI, 44-46 and 56-57 capped to AVX-VNNI (the path of
 * Intel's desktop cores since Alder Lake: their instructions on this core, not their memory). 32 sequences of IFEval's
 * longest context hold about 7.2 GB of KV, so a 16 GiB host stays at 16. BF16 experts take the float kernels, which
 * were not measured past 16.
 */
export const CPU_VNNI_PLAN: MemoryPlan = { ...CPU_PLAN, batches: [32, 24, ...CPU_PLAN.batches] };

/** The CPU's plan for a run's weights on the INT4 kernel path the worker reports (`DeviceProbe.cpuIsa`; null unknown). */
export function cpuPlan(weights: 'int4' | 'bf16', cpuIsa: string | null): MemoryPlan {
  return weights === 'int4' && (cpuIsa === 'avx512-vnni' || cpuIsa === 'avx-vnni') ? CPU_VNNI_PLAN : CPU_PLAN;
}

export interface BatchSizing {
  /** Memory of the device the run will use: the GPU's, or the host's for a CPU run. */
  readonly memoryBytes: number;
  /** Of that, what a model load can use now (other programs' use left out). */
  readonly freeBytes: number;
  /** Bytes of the model's weights (the packed folder's tensors, or the checkpoint's). */
  readonly weightBytes: number;
  /** K and V bytes one token of one sequence holds over all layers (FP16). */
  readonly kvBytesPerToken: number;
  /** KV room per sequence the run reserves (longest prompt plus the new-token budget). */
  readonly contextTokens: number;
}

/**
 * The largest of the plan's batches whose KV cache fits beside every weight, both in the share of the device a run
 * plans with and in what is free now; the plan's `noRoom` when not even one sequence fits.
 */
export function chooseBatch(plan: MemoryPlan, s: BatchSizing): number {
  const usable = Math.min(s.memoryBytes * plan.usableShare - plan.reserveBytes, s.freeBytes - plan.freeReserveBytes);
  const room = usable - s.weightBytes;
  const perSequence = s.kvBytesPerToken * s.contextTokens;
  for (const b of plan.batches) if (b * perSequence <= room) return b;
  return plan.noRoom;
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

/** Bytes of the .safetensors files in `dir`: the weights a backend loads from it. */
export async function tensorBytes(dir: string): Promise<number> {
  let total = 0;
  for (const name of await readdir(dir)) {
    if (name.endsWith('.safetensors')) total += (await stat(path.join(dir, name))).size;
  }
  return total;
}

/** The host's memory, as the operating system reports it (on Linux, free is MemAvailable). */
export interface HostMemory {
  readonly totalBytes: number;
  readonly freeBytes: number;
}

export function hostMemory(): HostMemory {
  return { totalBytes: os.totalmem(), freeBytes: os.freemem() };
}

/**
 * The batch for a run of `source` that asked for none: sized for the GPU the worker would load it on (the CUDA
 * backend runs INT4 models) or, on the CPU, for the host's memory; RUN_BATCH.gpuFallback or RUN_BATCH.cpuDefault when
 * the KV sizes cannot be read from the model's config.
 */
export async function autoBatch(opts: {
  readonly source: ModelSource;
  readonly requestedBackend: 'auto' | 'cpu' | 'cuda';
  readonly cudaDevice?: number;
  readonly probe: () => Promise<DeviceProbe | null>;
  readonly contextTokens: () => Promise<number>;
  readonly host?: () => HostMemory;
}): Promise<number> {
  const { source } = opts;
  const mayUseGpu = opts.requestedBackend !== 'cpu' && source.weights === 'int4' && source.packedDir !== null;
  // An INT4 run on the CPU asks too: the batch it can use depends on the kernel path.
  const probe = source.weights === 'int4' ? await opts.probe() : null;
  const device = probe && mayUseGpu ? probedDevice(probe, opts.cudaDevice) : undefined;
  const kv = await kvBytesPerToken(source.modelDir);
  if (kv === null) return device ? RUN_BATCH.gpuFallback : DEFAULT_BATCH;
  const weightBytes = await tensorBytes(source.packedDir ?? source.modelDir);
  const contextTokens = await opts.contextTokens();
  if (device) {
    return chooseBatch(GPU_PLAN, {
      memoryBytes: device.vramBytes,
      freeBytes: device.freeVramBytes,
      weightBytes,
      kvBytesPerToken: kv,
      contextTokens,
    });
  }
  const host = (opts.host ?? hostMemory)();
  // A worker still holding an earlier run's model has its weights out of what is free: counted twice, the choice errs
  // small rather than large.
  const plan = cpuPlan(source.weights, probe?.cpuIsa ?? null);
  return chooseBatch(plan, { memoryBytes: host.totalBytes, freeBytes: host.freeBytes, weightBytes, kvBytesPerToken: kv, contextTokens });
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

/**
 * The INT4 responses the quality check generates together on the CPU: as many as a CPU run of the pack would take on
 * this kernel path (CPU_PLAN or CPU_VNNI_PLAN), counting the BF16 reference's weights beside the INT4 ones since the
 * check keeps both loaded, and never fewer than `floor` (the check's default, which a host too small for more still
 * ran). A CPU run's responses are the same bits whatever its batch, so this moves only the time: 32 prompts x 128
 * tokens on a two-layer OLMoE-shaped model, two Xeon cores with AVX-512 VNNI, three alternated rounds, took 27.9-30.5
 * s at 8, 24.4-26.8 at 16 and 20.9-23.0 at 32, and the whole check (Q4_0 pass included) 139.6 s at 8 and 129.2 at 32.
 */
export async function qualityCheckCpuBatch(opts: {
  readonly int4Dir: string;
  readonly bf16Dir: string;
  readonly cpuIsa: string | null;
  readonly contextTokens: number;
  readonly floor: number;
  readonly host?: HostMemory;
}): Promise<number> {
  const kv = await kvBytesPerToken(opts.int4Dir);
  if (kv === null) return opts.floor;
  const host = opts.host ?? hostMemory();
  const weightBytes = (await tensorBytes(opts.int4Dir)) + (await tensorBytes(opts.bf16Dir));
  const batch = chooseBatch(cpuPlan('int4', opts.cpuIsa), {
    memoryBytes: host.totalBytes, freeBytes: host.freeBytes, weightBytes, kvBytesPerToken: kv, contextTokens: opts.contextTokens,
  });
  return Math.max(batch, opts.floor);
}
