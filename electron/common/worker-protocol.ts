/**
 * Messages between the main process and the runtime worker (the only process that loads the native addon).
 * Main sends `{seq, request}`; the worker answers each with `{seq, ok, value|error}` and streams events tagged
 * with a job id. Every message is validated where it arrives (`parseWorkerRequest`, `parseWorkerMessage`).
 * To add a request: add a member to WorkerRequest, its value type to WorkerResponseValues, and a case to
 * `parseRequestBody` and to the worker's dispatch switch.
 */
import { isRecord } from './is-record.js';
import type { AppError } from './result.js';
import { GENERATION_LIMITS } from './run-settings.js';

export type WeightsKind = 'bf16' | 'int4';
/** Where a model runs: one name from the native runtime (backend_kind) to the stored runs; the CPU backend is 'cpu'. */
export type BackendKind = 'cpu' | 'cuda';
export type BackendChoice = 'auto' | BackendKind;

/** A CUDA device as the worker sees it. */
export interface WorkerDeviceInfo {
  readonly index: number;
  readonly name: string;
  /** Total device memory in bytes. */
  readonly vramBytes: number;
  /**
   * Bytes a model load can use: what the driver reports free plus what the worker's loaded model holds on this
   * device, since a load replaces that model.
   */
  readonly freeVramBytes: number;
  /** CUDA driver version as the driver reports it, e.g. "12.4". */
  readonly driverVersion: string;
  /** "major.minor", e.g. "8.9". */
  readonly computeCapability: string;
}

/** What the worker can run on; `label` is "CPU" when there is no usable CUDA device. */
export interface DeviceProbe {
  readonly label: string;
  readonly cudaCompiled: boolean;
  readonly devices: readonly WorkerDeviceInfo[];
  /** Why CUDA is not usable, empty when it is. */
  readonly note: string;
  /** The CPU backend's INT4 kernel path on this host: "scalar", "avx2", "avx-vnni" or "avx512-vnni". */
  readonly cpuIsa: string;
}

/** The probed device a CUDA load runs on: the one asked for, or the first; undefined when it is not there. */
export function probedDevice(probe: DeviceProbe, cudaDevice?: number): WorkerDeviceInfo | undefined {
  const index = cudaDevice ?? probe.devices[0]?.index;
  return probe.devices.find((d) => d.index === index);
}

/** Why a load with these choices cannot run on the probed devices: CUDA asked for and none usable, or no such device. */
export type DeviceProblem =
  | { readonly kind: 'no-cuda'; readonly note: string }
  | { readonly kind: 'no-such-device'; readonly device: number; readonly devices: readonly WorkerDeviceInfo[] };

/**
 * The worker's rule for where a load runs, as a check: 'auto' without a device index takes the CPU when no CUDA device
 * is usable; otherwise the device asked for (the first when none) must exist.
 */
export function deviceProblem(probe: DeviceProbe, choice: BackendChoice, cudaDevice?: number): DeviceProblem | null {
  if (choice === 'cpu' || (choice === 'auto' && cudaDevice === undefined && probe.devices.length === 0)) return null;
  if (probe.devices.length === 0) return { kind: 'no-cuda', note: probe.note };
  if (!probedDevice(probe, cudaDevice)) return { kind: 'no-such-device', device: cudaDevice ?? 0, devices: probe.devices };
  return null;
}

/** Greedy decoding with a token budget; generation stops at any of `stopTokenIds`. */
export interface GenerationPolicy {
  readonly decoding: 'greedy';
  /** At most this many generated tokens per prompt (1..65536). */
  readonly maxNewTokens: number;
  readonly stopTokenIds: readonly number[];
  /**
   * The batch: at most this many items generate at once (1..1024); the next item, in order, starts as soon as one
   * ends (continuous batching). All at once when omitted. The same name from the run's setting to the native request.
   */
  readonly batch?: number;
}

export interface LoadedModelInfo {
  readonly modelDir: string;
  readonly packedDir: string | null;
  readonly weights: WeightsKind;
  /** The backend actually in use, never a guess. */
  readonly backend: BackendKind;
  /** Human label of the device, "CPU" for the CPU backend. */
  readonly deviceLabel: string;
  /** Where the expert weights live, e.g. "all on GPU", "host" (free text from the runtime). */
  readonly residency: string;
  /** The tokenizer's EOS id(s) plus config.json's eos_token_id, deduplicated. */
  readonly eosTokenIds: readonly number[];
  readonly vocabSize: number;
  /** Tokens per sequence the loaded model has KV room for. */
  readonly maxContext: number;
}

export interface ChatEncoding {
  /** The prompt after the chat template, as text. */
  readonly text: string;
  readonly tokenIds: readonly number[];
}

export type FinishReason = 'stop' | 'length' | 'cancelled';

/**
 * What a peak GPU memory figure measures: this process's memory (NVML's per-process accounting), or the GPU's used
 * memory with other processes included, where the driver does not account per process (Windows WDDM, containers).
 */
export type PeakMemoryScope = 'process' | 'device';
export const PEAK_MEMORY_SCOPES: readonly PeakMemoryScope[] = ['process', 'device'];

/** One prompt's generation as it ended: what the engine reports, and what the worker answers with its item id. */
export interface PromptGeneration {
  /** The generated tokens, without a final stop token. */
  readonly tokenIds: readonly number[];
  readonly finishReason: FinishReason;
  /** Milliseconds from the start of this prompt's prefill step to its first generated token (-1 if none). */
  readonly ttftMs: number;
  /** Decode tokens per second for this prompt, after its first token (0 if fewer than 2 tokens). */
  readonly decodeTokensPerSecond: number;
}

export interface GenerationItemResult extends PromptGeneration {
  readonly itemId: string;
  readonly text: string;
}

export interface GenerationBatchResult {
  readonly items: readonly GenerationItemResult[];
  readonly wallMs: number;
  /** Peak device memory during the batch, bytes (0 on the CPU backend). */
  readonly peakMemoryBytes: number;
  /** What peakMemoryBytes measures; null on the CPU backend. */
  readonly peakMemoryScope: PeakMemoryScope | null;
  /** Host-to-device bytes copied during the batch (0 on the CPU backend). */
  readonly h2dBytes: number;
  /** CUDA: the expert cache's counts over the batch (see backend_counters); absent or null on the CPU backend. */
  readonly expertCache?: ExpertCacheCounts | null;
}

/**
 * Expert uses found on the GPU (hits), copied in first (misses), and GPU copies discarded for room (evictions). Under
 * full residency every routed use is a hit; under partial residency a layer step counts each distinct expert once.
 */
export interface ExpertCacheCounts {
  readonly hits: number;
  readonly misses: number;
  readonly evictions: number;
}

export interface GenerationItem {
  readonly itemId: string;
  readonly tokenIds: readonly number[];
}

export type WorkerRequest =
  | { readonly type: 'probe' }
  | {
      readonly type: 'load';
      /** The Hugging Face checkpoint folder: config.json, tokenizer files and (for bf16) the safetensors. */
      readonly modelDir: string;
      /** The qpacked-v2 INT4 folder; required when `weights` is int4. */
      readonly packedDir: string | null;
      readonly weights: WeightsKind;
      readonly backend: BackendChoice;
      /**
       * Tokens per sequence (prompt + generated) to reserve KV cache for; the model's max_position_embeddings when
       * omitted. A run sizes it from its longest prompt, which on a GPU leaves more memory for resident experts.
       */
      readonly maxContext?: number;
      /** Sequences generated together (a run's batch size): the CUDA backend reserves their KV cache; 8 when omitted. */
      readonly maxSequences?: number;
      /** CUDA: bytes of device memory for resident experts; the backend's default (as much as fits) when omitted. */
      readonly expertBudgetBytes?: number;
      /** CUDA device index (as the probe lists them); the first device when omitted. Ignored on the CPU. */
      readonly cudaDevice?: number;
    }
  | { readonly type: 'encode-chat'; readonly prompts: readonly string[] }
  | {
      readonly type: 'decode';
      readonly tokenIds: readonly number[];
      /** The ids begin a response still being generated: a character not yet complete at the end is left out. */
      readonly prefix?: boolean;
    }
  | {
      readonly type: 'generate';
      readonly jobId: string;
      readonly items: readonly GenerationItem[];
      readonly policy: GenerationPolicy;
    }
  | { readonly type: 'cancel'; readonly jobId: string }
  | { readonly type: 'unload' };

export type WorkerRequestType = WorkerRequest['type'];

/** The value each request resolves to. */
export interface WorkerResponseValues {
  probe: DeviceProbe;
  load: LoadedModelInfo;
  'encode-chat': readonly ChatEncoding[];
  decode: string;
  generate: GenerationBatchResult;
  /** True when a job with that id was running. */
  cancel: boolean;
  unload: null;
}

export interface WorkerRequestEnvelope {
  readonly seq: number;
  readonly request: WorkerRequest;
}

export type WorkerResponseEnvelope =
  | { readonly seq: number; readonly ok: true; readonly value: unknown }
  | { readonly seq: number; readonly ok: false; readonly error: AppError };

/** Streamed while a job runs, one per generated token (the stop token included); `decode` turns them into text. */
export interface TokenEvent {
  readonly event: 'token';
  readonly jobId: string;
  readonly itemId: string;
  readonly tokenId: number;
  /** Number of tokens generated so far for this item. */
  readonly count: number;
}

/**
 * Sent once per item of a generate job as soon as it finishes (stop token, token budget or context limit), before
 * the job's reply, so main can store it while the others go on; the reply lists every item again.
 */
export interface ItemEvent {
  readonly event: 'item';
  readonly jobId: string;
  readonly item: GenerationItemResult;
}

export interface LogEvent {
  readonly event: 'log';
  readonly level: 'info' | 'warn' | 'error';
  readonly message: string;
}

/** Sent once when the worker's message loop is up. */
export interface ReadyEvent {
  readonly event: 'ready';
  readonly pid: number;
}

export type WorkerEvent = TokenEvent | ItemEvent | LogEvent | ReadyEvent;

export type WorkerMessage = WorkerResponseEnvelope | WorkerEvent;

type Parsed<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly problem: string };

/** The largest per-sequence context a load request may ask for. */
export const MAX_CONTEXT_LIMIT = 1 << 20;
/** The highest CUDA device index a request may name. */
export const MAX_CUDA_DEVICE = 63;

function isIntArray(x: unknown): x is number[] {
  return Array.isArray(x) && x.every((v) => Number.isInteger(v) && v >= 0);
}

function isIntIn(x: unknown, lo: number, hi: number): x is number {
  return Number.isInteger(x) && (x as number) >= lo && (x as number) <= hi;
}

function isString(x: unknown): x is string {
  return typeof x === 'string';
}

function parsePolicy(x: unknown): GenerationPolicy | string {
  if (!isRecord(x)) return 'policy must be an object';
  if (x.decoding !== 'greedy') return `policy.decoding must be 'greedy'`;
  if (!isIntIn(x.maxNewTokens, 1, GENERATION_LIMITS.maxNewTokens)) return `policy.maxNewTokens must be an integer in 1..${GENERATION_LIMITS.maxNewTokens}`;
  if (!isIntArray(x.stopTokenIds)) return 'policy.stopTokenIds must be non-negative integers';
  if (x.batch !== undefined && !isIntIn(x.batch, 1, GENERATION_LIMITS.batch)) {
    return `policy.batch must be an integer in 1..${GENERATION_LIMITS.batch}`;
  }
  return {
    decoding: 'greedy', maxNewTokens: x.maxNewTokens, stopTokenIds: x.stopTokenIds,
    ...(x.batch !== undefined ? { batch: x.batch } : {}),
  };
}

function parseRequestBody(r: Record<string, unknown>): WorkerRequest | string {
  switch (r.type) {
    case 'probe':
    case 'unload':
      return { type: r.type };
    case 'load':
      if (!isString(r.modelDir) || r.modelDir === '') return 'load.modelDir must be a non-empty string';
      if (r.weights !== 'bf16' && r.weights !== 'int4') return `load.weights must be 'bf16' or 'int4'`;
      if (r.backend !== 'auto' && r.backend !== 'cpu' && r.backend !== 'cuda') {
        return `load.backend must be 'auto', 'cpu' or 'cuda'`;
      }
      if (r.packedDir !== null && (!isString(r.packedDir) || r.packedDir === '')) {
        return 'load.packedDir must be a non-empty string or null';
      }
      if (r.weights === 'int4' && r.packedDir === null) return 'load.packedDir is required for int4 weights';
      if (r.maxContext !== undefined && !isIntIn(r.maxContext, 1, MAX_CONTEXT_LIMIT)) {
        return `load.maxContext must be an integer in 1..${MAX_CONTEXT_LIMIT}`;
      }
      if (r.maxSequences !== undefined && !isIntIn(r.maxSequences, 1, 1024)) return 'load.maxSequences must be an integer in 1..1024';
      if (r.expertBudgetBytes !== undefined && !isIntIn(r.expertBudgetBytes, 1, Number.MAX_SAFE_INTEGER)) {
        return 'load.expertBudgetBytes must be a positive integer';
      }
      if (r.cudaDevice !== undefined && !isIntIn(r.cudaDevice, 0, MAX_CUDA_DEVICE)) {
        return `load.cudaDevice must be an integer in 0..${MAX_CUDA_DEVICE}`;
      }
      return {
        type: 'load', modelDir: r.modelDir, packedDir: r.packedDir, weights: r.weights, backend: r.backend,
        ...(r.maxContext !== undefined ? { maxContext: r.maxContext } : {}),
        ...(r.maxSequences !== undefined ? { maxSequences: r.maxSequences } : {}),
        ...(r.expertBudgetBytes !== undefined ? { expertBudgetBytes: r.expertBudgetBytes } : {}),
        ...(r.cudaDevice !== undefined ? { cudaDevice: r.cudaDevice } : {}),
      };
    case 'encode-chat':
      if (!Array.isArray(r.prompts) || !r.prompts.every(isString)) return 'encode-chat.prompts must be strings';
      return { type: 'encode-chat', prompts: r.prompts };
    case 'decode':
      if (!isIntArray(r.tokenIds)) return 'decode.tokenIds must be non-negative integers';
      if (r.prefix !== undefined && typeof r.prefix !== 'boolean') return 'decode.prefix must be a boolean';
      return { type: 'decode', tokenIds: r.tokenIds, ...(r.prefix !== undefined ? { prefix: r.prefix } : {}) };
    case 'generate': {
      if (!isString(r.jobId) || r.jobId === '') return 'generate.jobId must be a non-empty string';
      if (!Array.isArray(r.items) || r.items.length === 0) return 'generate.items must be a non-empty array';
      const items: GenerationItem[] = [];
      for (const [i, it] of r.items.entries()) {
        if (!isRecord(it) || !isString(it.itemId) || !isIntArray(it.tokenIds) || it.tokenIds.length === 0) {
          return `generate.items[${i}] must be {itemId: string, tokenIds: non-empty integer array}`;
        }
        items.push({ itemId: it.itemId, tokenIds: it.tokenIds });
      }
      const policy = parsePolicy(r.policy);
      if (typeof policy === 'string') return `generate.${policy}`;
      return { type: 'generate', jobId: r.jobId, items, policy };
    }
    case 'cancel':
      if (!isString(r.jobId)) return 'cancel.jobId must be a string';
      return { type: 'cancel', jobId: r.jobId };
    default:
      return `unknown request type ${JSON.stringify(r.type)}`;
  }
}

/** Validates a message arriving at the worker. */
export function parseWorkerRequest(x: unknown): Parsed<WorkerRequestEnvelope> {
  if (!isRecord(x) || !Number.isInteger(x.seq) || !isRecord(x.request)) {
    return { ok: false, problem: 'worker request must be {seq: integer, request: object}' };
  }
  const body = parseRequestBody(x.request);
  if (typeof body === 'string') return { ok: false, problem: `worker request ${String(x.seq)}: ${body}` };
  return { ok: true, value: { seq: x.seq as number, request: body } };
}

/** Validates the envelope of a message arriving at main; values are checked by the caller that knows the type. */
export function parseWorkerMessage(x: unknown): Parsed<WorkerMessage> {
  if (!isRecord(x)) return { ok: false, problem: 'worker message must be an object' };
  if ('seq' in x) {
    if (!Number.isInteger(x.seq)) return { ok: false, problem: 'worker response seq must be an integer' };
    if (x.ok === true) return { ok: true, value: { seq: x.seq as number, ok: true, value: x.value } };
    if (x.ok === false && isRecord(x.error) && isString(x.error.code) && isString(x.error.message)) {
      return { ok: true, value: { seq: x.seq as number, ok: false, error: x.error as unknown as AppError } };
    }
    return { ok: false, problem: `worker response ${String(x.seq)} must carry ok:true+value or ok:false+error` };
  }
  switch (x.event) {
    case 'token':
      if (isString(x.jobId) && isString(x.itemId) && Number.isInteger(x.tokenId) && Number.isInteger(x.count)) {
        return { ok: true, value: x as unknown as TokenEvent };
      }
      return { ok: false, problem: 'token event must carry jobId, itemId, tokenId, count' };
    case 'item': {
      const problem = isString(x.jobId) ? checkItemResult(x.item, 0) : 'jobId must be a string';
      if (problem === null && isRecord(x.item) && x.item.finishReason !== 'cancelled') return { ok: true, value: x as unknown as ItemEvent };
      return { ok: false, problem: `item event: ${problem ?? 'a cancelled item is not reported as finished'}` };
    }
    case 'log':
      if ((x.level === 'info' || x.level === 'warn' || x.level === 'error') && isString(x.message)) {
        return { ok: true, value: x as unknown as LogEvent };
      }
      return { ok: false, problem: 'log event must carry level and message' };
    case 'ready':
      if (Number.isInteger(x.pid)) return { ok: true, value: x as unknown as ReadyEvent };
      return { ok: false, problem: 'ready event must carry pid' };
    default:
      return { ok: false, problem: `unknown worker event ${JSON.stringify(x.event)}` };
  }
}

function isNumber(x: unknown): x is number {
  return typeof x === 'number' && Number.isFinite(x);
}

function checkItemResult(x: unknown, i: number): string | null {
  if (!isRecord(x)) return `items[${i}] must be an object`;
  if (!isString(x.itemId) || !isIntArray(x.tokenIds) || !isString(x.text)) return `items[${i}] needs itemId, tokenIds and text`;
  if (x.finishReason !== 'stop' && x.finishReason !== 'length' && x.finishReason !== 'cancelled') {
    return `items[${i}].finishReason must be stop, length or cancelled`;
  }
  if (!isNumber(x.ttftMs) || !isNumber(x.decodeTokensPerSecond)) return `items[${i}] needs numeric ttftMs and decodeTokensPerSecond`;
  return null;
}

/** Checks the shape of a successful response's value for the request type it answers; null when it fits. */
export function checkResponseValue(type: WorkerRequestType, v: unknown): string | null {
  switch (type) {
    case 'probe':
      return isRecord(v) && isString(v.label) && Array.isArray(v.devices) && isString(v.note) && typeof v.cudaCompiled === 'boolean' &&
        isString(v.cpuIsa)
        ? null
        : 'probe value needs label, cudaCompiled, devices, note and cpuIsa';
    case 'load':
      return isRecord(v) && (v.backend === 'cpu' || v.backend === 'cuda') && isString(v.deviceLabel) && isString(v.residency) &&
        isIntArray(v.eosTokenIds) && Number.isInteger(v.vocabSize) && Number.isInteger(v.maxContext)
        ? null
        : 'load value needs backend, deviceLabel, residency, eosTokenIds, vocabSize and maxContext';
    case 'encode-chat':
      return Array.isArray(v) && v.every((e) => isRecord(e) && isString(e.text) && isIntArray(e.tokenIds))
        ? null
        : 'encode-chat value must be [{text, tokenIds}]';
    case 'decode':
      return isString(v) ? null : 'decode value must be a string';
    case 'generate': {
      if (!isRecord(v) || !Array.isArray(v.items)) return 'generate value needs items';
      if (!isNumber(v.wallMs) || !isNumber(v.peakMemoryBytes) || !isNumber(v.h2dBytes)) return 'generate value needs wallMs, peakMemoryBytes, h2dBytes';
      if (v.peakMemoryScope !== null && !PEAK_MEMORY_SCOPES.includes(v.peakMemoryScope as PeakMemoryScope)) {
        return 'generate value: peakMemoryScope must be process, device or null';
      }
      if (v.expertCache != null) {
        const c = v.expertCache;
        if (!isRecord(c) || ![c.hits, c.misses, c.evictions].every((n) => isNumber(n) && (n as number) >= 0)) {
          return 'generate value: expertCache needs hits, misses and evictions (counts)';
        }
      }
      for (const [i, it] of v.items.entries()) {
        const p = checkItemResult(it, i);
        if (p) return `generate value: ${p}`;
      }
      return null;
    }
    case 'cancel':
      return typeof v === 'boolean' ? null : 'cancel value must be a boolean';
    case 'unload':
      return v === null ? null : 'unload value must be null';
    default:
      return `unknown request type ${JSON.stringify(type)}`;
  }
}
