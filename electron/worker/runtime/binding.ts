/**
 * The only module that loads the native addon. Everything native is typed here.
 */
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { isNativeStatus, type NativeStatus } from '../../common/native-status.js';
import type { BackendKind, PromptGeneration, WeightsKind } from '../../common/worker-protocol.js';

/** A CUDA device as reported by the driver. */
export interface NativeDeviceInfo {
  readonly index: number;
  readonly name: string;
  readonly totalMemoryBytes: number;
  readonly freeMemoryBytes: number;
  readonly computeCapability: string;
  readonly driverVersion: number;
}

/** The outcome of probing for CUDA; `devices` is empty on a machine without a usable GPU. */
export interface NativeDeviceProbe {
  readonly cudaCompiled: boolean;
  readonly error: string;
  readonly devices: readonly NativeDeviceInfo[];
  /** The CPU backend's INT4 kernel path on this host (`cpu_isa_name`): "scalar", "avx2", "avx-vnni", "avx512-vnni". */
  readonly cpuIsa: string;
}

/**
 * How the addon rejects: `code` says what went wrong and, when one prompt of a generate request is at fault
 * (invalid_prompt, numeric_fault), `promptIndex` is its position; the message is for people.
 */
export interface NativeError extends Error {
  readonly code: NativeStatus;
  readonly promptIndex?: number;
}

export function isNativeError(e: unknown): e is NativeError {
  return e instanceof Error && isNativeStatus((e as { code?: unknown }).code);
}

export type { BackendKind, WeightsKind };

/** Options of `loadModel`. */
export interface LoadModelOptions {
  /** A Hugging Face OLMoE folder (bf16) or a folder written by `horizon pack` (int4). */
  readonly dir: string;
  readonly weights: WeightsKind;
  readonly backend: BackendKind;
  /** CPU worker threads; default one per physical core the process may use (SMT siblings count once). */
  readonly threads?: number;
  /** Tokens per sequence (prompt + generated); default the config's max_position_embeddings. */
  readonly maxContext?: number;
  /** CUDA: sequences generated together, whose KV is reserved before the expert cache is sized; default 8. */
  readonly maxSequences?: number;
  /** CUDA: bytes of device memory for resident experts; default chosen by the backend. */
  readonly expertBudget?: number;
  /** CUDA: GPU expert slots per layer (overrides expertBudget). */
  readonly expertSlots?: number;
  /** CUDA device index; default 0. */
  readonly device?: number;
}

/**
 * 'q4_0': BF16 source experts run as llama.cpp runs Q4_0: the weights rounded as Q4_0 rounds them, their inputs as
 * Q8_0 does (bf16 weights on the CPU only): the quality check's point of comparison.
 */
export type ExpertRounding = 'none' | 'q4_0';

export interface LogitsOptions {
  /** How this call rounds the experts; default 'none'. */
  readonly expertRounding?: ExpertRounding;
  /** The first position whose logits are wanted (default 0): rows before it are not computed. */
  readonly from?: number;
}

/** Static facts about a loaded model. */
export interface NativeModelInfo {
  readonly backend: BackendKind;
  readonly weights: WeightsKind;
  readonly dir: string;
  /** INT4 group size (0 for bf16). */
  readonly groupSize: number;
  readonly hiddenSize: number;
  readonly intermediateSize: number;
  readonly numLayers: number;
  readonly numHeads: number;
  readonly numKvHeads: number;
  readonly headDim: number;
  readonly numExperts: number;
  readonly expertsPerToken: number;
  readonly vocabSize: number;
  readonly maxContext: number;
  /** From config.json `eos_token_id` (may be empty). */
  readonly eosTokenIds: readonly number[];
  /** Bytes of all mapped weight tensors. */
  readonly weightBytes: number;
  readonly threads: number;
  /** CPU AVX2/F16C kernels in use. */
  readonly simd: boolean;
  /** The CPU's 4-bit x 8-bit kernel path: 'scalar', 'avx2', 'avx-vnni' or 'avx512-vnni'. */
  readonly cpuIsa: string;
  /** CUDA: routed experts per layer resident on the GPU (numExperts means full residency); 0 on the CPU. */
  readonly deviceExpertSlots: number;
  /** Empty while the model can run; otherwise the device error after which it refuses every request (only a new
   * process can use the device again). */
  readonly fault: string;
  /** CUDA device index the model runs on; -1 on the CPU. */
  readonly device: number;
  /** CUDA: bytes of device memory the model holds now (weights, expert slots, KV, scratch); 0 on the CPU. */
  readonly deviceBytes: number;
}

/** A batch of greedy generations. */
export interface GenerateRequest {
  /** Token ids of each prompt (chat template already applied). */
  readonly prompts: readonly (readonly number[])[];
  readonly maxNewTokens: number;
  /** A prompt stops after emitting one of these (the stop token is included in `tokens`). */
  readonly stopTokens?: readonly number[];
  /** Prompt tokens one step feeds at most (a longer prompt is prefilled in chunks over several steps); default 4096. */
  readonly prefillTokenBudget?: number;
  /**
   * At most this many prompts generate at once; the next (in order) starts as soon as one ends, so a long response
   * does not hold idle places (continuous batching). All at once when omitted.
   */
  readonly batch?: number;
}

/** One prompt's outcome as the runtime reports it: its figures as PromptGeneration names them, `tokens` with the stop token. */
export interface GenerateResult extends Omit<PromptGeneration, 'tokenIds'> {
  readonly tokens: readonly number[];
  readonly promptTokens: number;
}

/** Request-wide backend figures; counters that do not apply to a backend are 0. */
export interface GenerateStats {
  readonly prefillMs: number;
  readonly decodeMs: number;
  /** Forwards that fed prompt tokens (a prompt longer than prefillTokenBudget takes several) and that only decoded. */
  readonly prefillSteps: number;
  readonly decodeSteps: number;
  readonly expertHits: number;
  readonly expertMisses: number;
  readonly h2dBytes: number;
  readonly d2hBytes: number;
  readonly peakMemoryBytes: number;
  /**
   * What peakMemoryBytes measures: the CPU backend's KV + scratch estimate; on CUDA this process's GPU memory (NVML)
   * or, where the driver does not report it per process (Windows WDDM, a container's PID namespace), the GPU's used
   * memory with other processes included.
   */
  readonly peakMemoryScope: 'estimate' | 'process' | 'device';
  /** CUDA partial residency: GPU expert copies discarded to make room. */
  readonly expertEvictions?: number;
}

export interface GenerateOutput {
  readonly results: readonly GenerateResult[];
  readonly stats: GenerateStats;
}

/**
 * Called on the JS thread for each generated token, in order; `index` is the prompt's position in the request. `end`
 * comes with the token that ends the prompt (stop token, maxNewTokens or the context limit): its finished result.
 */
export type TokenCallback = (index: number, token: number, end?: GenerateResult) => void;

/** A model loaded by the native runtime. Requests on one model run one at a time, off the JS thread. */
export interface NativeModel {
  info(): NativeModelInfo;
  /** Logits of positions `options.from` (default 0) .. of `tokens` (one vocabSize row each) from an empty context. */
  logits(tokens: readonly number[], options?: LogitsOptions): Promise<Float32Array[]>;
  /** Greedy generation for a batch; aborting `signal` ends every prompt with finishReason 'cancelled'. */
  generate(request: GenerateRequest, onToken?: TokenCallback, signal?: AbortSignal): Promise<GenerateOutput>;
  /**
   * Releases the model: generations still running end 'cancelled' at their next step, a logits call still running
   * finishes, and the memory is freed when the last of them returns. Further calls throw.
   */
  close(): void;
}

/** What the native packer wrote (everything but horizon-manifest.json). */
export interface NativePackResult {
  readonly groupSize: number;
  /** Names relative to the source folder that were read or copied. */
  readonly sourceFiles: readonly string[];
  /** Names relative to the output folder. */
  readonly outputFiles: readonly string[];
  /** Bytes of source tensors processed. */
  readonly sourceBytes: number;
}

/** Options of the native qpacked-v2 packer. */
export interface NativePackOptions {
  readonly src: string;
  readonly dst: string;
  /** Default: 128, else the largest of 64, 32, 16, 8 dividing every expert input width. */
  readonly groupSize?: number;
  readonly threads?: number;
  /** Target output shard size in bytes (default about 2 GB). */
  readonly shardBytes?: number;
}

interface CancellableJob<T> {
  readonly promise: Promise<T>;
  cancel(): void;
}

interface NativeModelHandle {
  info(): NativeModelInfo;
  logits(tokens: Int32Array, options?: LogitsOptions): Promise<Float32Array[]>;
  generate(
    request: {
      prompts: Int32Array[];
      maxNewTokens: number;
      stopTokens: Int32Array;
      prefillTokenBudget?: number;
      batch?: number;
      /** Set when the signal was already aborted, so the worker thread starts cancelled. */
      startCancelled: boolean;
    },
    onToken: TokenCallback,
  ): CancellableJob<GenerateOutput>;
  close(): void;
}

export interface NativeBinding {
  readonly abiVersion: number;
  probeDevices(): NativeDeviceProbe;
  loadModel(options: LoadModelOptions): Promise<NativeModelHandle>;
  /** onProgress(doneBytes, totalBytes) as tensors are packed, and with a third argument, an output shard's name, once
   * that shard is renamed into place (the packer does not write it again). */
  pack(
    options: NativePackOptions,
    onProgress: (doneBytes: number, totalBytes: number, shardDone?: string) => void,
  ): CancellableJob<NativePackResult>;
}

const here = path.dirname(fileURLToPath(import.meta.url));

/**
 * The addon to load: `HORIZON_NATIVE_ADDON` when set (it must exist: silently loading another addon would test or
 * run the wrong runtime), else the source tree's build or an unpacked asar in a packaged app.
 */
export function resolveAddonPath(envPath: string | undefined, exists: (p: string) => boolean = existsSync): string {
  if (envPath) {
    if (!exists(envPath)) throw new Error(`HORIZON_NATIVE_ADDON names ${envPath}, which does not exist`);
    return envPath;
  }
  const fromRoot = (root: string) => path.join(root, 'native', 'build', 'Release', 'horizon_runtime.node');
  const candidates = [
    fromRoot(path.resolve(here, '..', '..', '..')),
    fromRoot(path.resolve(here, '..', '..', '..', '..')),
  ].map((p) => p.replace(`app.asar${path.sep}`, `app.asar.unpacked${path.sep}`));
  const found = candidates.find((p) => exists(p));
  if (!found) {
    throw new Error(`the native runtime is not built (looked for ${candidates.join(', ')}); run 'npm run build:native'`);
  }
  return found;
}

let cached: NativeBinding | undefined;

export function loadNativeBinding(): NativeBinding {
  if (cached) return cached;
  const require = createRequire(import.meta.url);
  cached = require(resolveAddonPath(process.env.HORIZON_NATIVE_ADDON)) as NativeBinding;
  return cached;
}

function withSignal<T>(job: CancellableJob<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return job.promise;
  const onAbort = () => job.cancel();
  if (signal.aborted) job.cancel();
  else signal.addEventListener('abort', onAbort, { once: true });
  return job.promise.finally(() => signal.removeEventListener('abort', onAbort));
}

/** Token ids as the addon takes them; Int32Array.from would turn 1.7, NaN or 2**32 + 5 into other ids silently. */
export function tokenIds(ids: readonly number[], what: string): Int32Array {
  for (const id of ids) {
    if (!Number.isInteger(id) || id < -(2 ** 31) || id >= 2 ** 31) throw new TypeError(`${what} must hold 32-bit integers, got ${id}`);
  }
  return Int32Array.from(ids);
}

/** Loads an OLMoE model folder on a backend; rejects with a NativeError whose message names the file/tensor at fault. */
export async function loadModel(options: LoadModelOptions): Promise<NativeModel> {
  const handle = await loadNativeBinding().loadModel(options);
  return {
    info: () => handle.info(),
    logits: async (tokens, options) => handle.logits(tokenIds(tokens, 'tokens'), options),
    generate: async (request, onToken, signal) =>
      withSignal(
        handle.generate(
          {
            prompts: request.prompts.map((p, i) => tokenIds(p, `prompts[${i}]`)),
            maxNewTokens: request.maxNewTokens,
            stopTokens: tokenIds(request.stopTokens ?? [], 'stopTokens'),
            prefillTokenBudget: request.prefillTokenBudget,
            batch: request.batch,
            startCancelled: signal?.aborted ?? false,
          },
          onToken ?? (() => {}),
        ),
        signal,
      ),
    close: () => handle.close(),
  };
}

/**
 * Runs the native qpacked-v2 packer off the JS thread; aborting `signal` stops it and removes partial shards.
 * `onShard` gets each output shard's name once it is complete and in place.
 */
export function packNative(
  options: NativePackOptions,
  onProgress?: (doneBytes: number, totalBytes: number) => void,
  signal?: AbortSignal,
  onShard?: (name: string) => void,
): Promise<NativePackResult> {
  const report = (doneBytes: number, totalBytes: number, shardDone?: string) => {
    if (shardDone === undefined) onProgress?.(doneBytes, totalBytes);
    else onShard?.(shardDone);
  };
  return withSignal(loadNativeBinding().pack(options, report), signal);
}
