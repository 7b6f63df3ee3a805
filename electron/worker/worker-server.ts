import type { AppError } from '../common/result.js';
import { assertNever } from '../common/result.js';
import type {
  DeviceProbe,
  GenerationBatchResult,
  GenerationItemResult,
  LoadedModelInfo,
  PromptGeneration,
  WorkerMessage,
  WorkerRequest,
  WorkerResponseValues,
} from '../common/worker-protocol.js';
import { parseWorkerRequest } from '../common/worker-protocol.js';
import type { EngineModel, InferenceEngine } from './runtime/inference-engine.js';
import { isNativeError } from './runtime/binding.js';
import { NATIVE_STATUS_CODES } from '../common/native-status.js';
import { ChatTokenizer } from '../node/chat-tokenizer.js';

/** The worker's end of the channel: `process.parentPort` under Electron, `process.send` under a Node fork. */
export interface WorkerPort {
  send(message: WorkerMessage): void;
  onMessage(handler: (message: unknown) => void): void;
}

/** Raised inside the worker to answer with a specific error code. */
export class WorkerError extends Error {
  constructor(
    readonly code: AppError['code'],
    message: string,
  ) {
    super(message);
  }
}

/** The probe as a load sees it: the loaded model's device memory counts as free, since a load replaces the model. */
export function countLoadedAsFree(
  probe: DeviceProbe,
  held: { readonly device: number; readonly bytes: number } | null,
): DeviceProbe {
  if (held === null || held.bytes <= 0) return probe;
  return {
    ...probe,
    devices: probe.devices.map((d) =>
      d.index === held.device ? { ...d, freeVramBytes: Math.min(d.vramBytes, d.freeVramBytes + held.bytes) } : d,
    ),
  };
}

/**
 * A runtime error as the worker answers it: its code mapped, and, where the runtime names a prompt by its position in a
 * generate job (`promptIndex`), the message naming that prompt's item id, which is what the caller knows it by. Other
 * errors pass through.
 */
export function fromNative(e: unknown, items: readonly { readonly itemId: string }[] = []): unknown {
  if (!isNativeError(e)) return e;
  const index = e.promptIndex;
  const item = index === undefined ? undefined : items[index];
  if (!item) return new WorkerError(NATIVE_STATUS_CODES[e.code], e.message);
  // The message leads with the position it names; what follows it is kept as the runtime said it.
  const lead = `generate: prompt ${index}`;
  const rest = e.message.startsWith(lead) ? e.message.slice(lead.length) : `: ${e.message}`;
  return new WorkerError(NATIVE_STATUS_CODES[e.code], `generate: item ${item.itemId}${rest}`);
}

interface Loaded {
  readonly info: LoadedModelInfo;
  readonly model: EngineModel;
  readonly tokenizer: ChatTokenizer;
}

/** Runs the worker's message loop on `port`, answering each request in order of completion. */
export function serveWorker(port: WorkerPort, engine: InferenceEngine): void {
  let loaded: Loaded | undefined;
  // Loads (and unloads) run one after another: two loads at once would each hold a whole model, and the first to
  // finish would be replaced without being disposed; an unload during a load would find nothing to unload.
  let loading: Promise<unknown> = Promise.resolve();
  const afterLoads = <T>(step: () => Promise<T> | T): Promise<T> => {
    const next = loading.then(step);
    loading = next.catch(() => undefined);
    return next;
  };
  const jobs = new Map<string, AbortController>();

  const requireModel = (): Loaded => {
    if (!loaded) throw new WorkerError('MODEL_NOT_FOUND', 'no model is loaded in the worker; send a load request first');
    return loaded;
  };

  async function handle<T extends WorkerRequest['type']>(
    request: Extract<WorkerRequest, { type: T }>,
  ): Promise<WorkerResponseValues[T]>;
  async function handle(request: WorkerRequest): Promise<WorkerResponseValues[WorkerRequest['type']]> {
    switch (request.type) {
      case 'probe':
        return countLoadedAsFree(engine.probe(), loaded?.model.deviceMemory() ?? null);
      case 'load':
        return afterLoads(() => load(request));
      case 'encode-chat': {
        const { tokenizer } = requireModel();
        return request.prompts.map((p) => tokenizer.encodeChat(p));
      }
      case 'decode': {
        const { tokenizer } = requireModel();
        return request.prefix ? tokenizer.decodePrefix(request.tokenIds) : tokenizer.decode(request.tokenIds);
      }
      case 'generate':
        return generate(request);
      case 'cancel': {
        const job = jobs.get(request.jobId);
        job?.abort();
        return job !== undefined;
      }
      case 'unload':
        return afterLoads(() => {
          loaded?.model.dispose();
          loaded = undefined;
          return null;
        });
      default:
        throw assertNever(request);
    }
  }

  async function load(request: Extract<WorkerRequest, { type: 'load' }>): Promise<LoadedModelInfo> {
    if (loaded) {
      loaded.model.dispose();
      loaded = undefined;
    }
    const tokenizer = await ChatTokenizer.load(request.modelDir);
    const model = await engine.load(request);
    const info: LoadedModelInfo = {
      modelDir: request.modelDir,
      packedDir: request.packedDir,
      weights: request.weights,
      backend: model.backend,
      deviceLabel: model.deviceLabel,
      residency: model.residency,
      eosTokenIds: tokenizer.eosTokenIds,
      vocabSize: model.vocabSize,
      maxContext: model.maxContext,
    };
    loaded = { info, model, tokenizer };
    return info;
  }

  async function generate(request: Extract<WorkerRequest, { type: 'generate' }>): Promise<GenerationBatchResult> {
    const { model, tokenizer } = requireModel();
    if (jobs.has(request.jobId)) throw new WorkerError('BAD_INPUT', `job ${request.jobId} is already running`);
    // The runtime refuses the whole job for one such prompt, naming only its position.
    const tooLong = request.items.find((i) => i.tokenIds.length > model.maxContext);
    if (tooLong) {
      throw new WorkerError(
        'BAD_INPUT',
        `item ${tooLong.itemId} has ${tooLong.tokenIds.length} prompt tokens, more than the ${model.maxContext} the model was loaded with`,
      );
    }
    // A prompt's generation as the worker answers it, in the item event and in the job's result alike.
    const answered = (itemId: string, g: PromptGeneration): GenerationItemResult => ({ ...g, itemId, text: tokenizer.decode(g.tokenIds) });
    const controller = new AbortController();
    jobs.set(request.jobId, controller);
    const counts = new Array<number>(request.items.length).fill(0);
    const started = performance.now();
    try {
      const result = await model.generate(
        request.items.map((i) => i.tokenIds),
        request.policy,
        (index, tokenId, end) => {
          const item = request.items[index];
          if (!item) return;
          counts[index] = (counts[index] ?? 0) + 1;
          port.send({ event: 'token', jobId: request.jobId, itemId: item.itemId, tokenId, count: counts[index] ?? 0 });
          if (end && end.finishReason !== 'cancelled') {
            port.send({ event: 'item', jobId: request.jobId, item: answered(item.itemId, end) });
          }
        },
        controller.signal,
      );
      if (result.items.length !== request.items.length) {
        throw new WorkerError('INTERNAL', `engine returned ${result.items.length} results for ${request.items.length} prompts`);
      }
      return {
        items: result.items.map((r, i) => answered(request.items[i]?.itemId ?? '', r)),
        wallMs: performance.now() - started,
        peakMemoryBytes: result.peakMemoryBytes,
        peakMemoryScope: result.peakMemoryScope,
        h2dBytes: result.h2dBytes,
        expertCache: result.expertCache ?? null,
      };
    } catch (e) {
      const fault = model.fault();
      if (fault === '') throw fromNative(e, request.items);
      // Nothing more can run on this device context; unloading frees what it can, and main restarts the worker.
      if (loaded?.model === model) loaded = undefined;
      model.dispose();
      throw new WorkerError('DEVICE_FAULT', `${fault} (the model was unloaded; the runtime worker must be restarted)`);
    } finally {
      jobs.delete(request.jobId);
    }
  }

  port.onMessage((raw) => {
    const parsed = parseWorkerRequest(raw);
    if (!parsed.ok) {
      const seq = typeof raw === 'object' && raw !== null && Number.isInteger((raw as { seq?: unknown }).seq)
        ? ((raw as { seq: number }).seq)
        : -1;
      port.send({ seq, ok: false, error: { code: 'BAD_INPUT', message: parsed.problem } });
      return;
    }
    const { seq, request } = parsed.value;
    handle(request).then(
      (value) => port.send({ seq, ok: true, value }),
      (raw: unknown) => {
        const e = fromNative(raw);
        const code = e instanceof WorkerError ? e.code : 'INTERNAL';
        const message = e instanceof Error ? e.message : String(e);
        port.send({ seq, ok: false, error: { code, message } });
      },
    );
  });
  port.send({ event: 'ready', pid: process.pid });
}
