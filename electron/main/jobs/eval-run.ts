/**
 * The IFEval run job: prompts → chat template + tokens (worker) → continuously batched greedy generation (worker, at
 * most `batch` prompts at once) → strict and loose scoring → SQLite, one transaction per response as it finishes. A
 * run restarted after a crash or cancel skips the prompts whose responses are stored, so at most the responses being
 * generated are lost.
 */
import { randomBytes } from 'node:crypto';

import type { Accuracies, RunProgress } from '../../common/ipc-contract.js';
import { labelRefusal } from '../../common/label.js';
import { RUN_BATCH, RUN_MAX_NEW_TOKENS } from '../../common/run-settings.js';
import type { Result } from '../../common/result.js';
import type { GenerationItemResult, LoadedModelInfo } from '../../common/worker-protocol.js';
import { MAX_CUDA_DEVICE } from '../../common/worker-protocol.js';
import { chatTemplateSource } from '../../node/chat-tokenizer.js';
import { scorePrompt } from '../../../evals/ifeval/score.js';
import type { TextTools } from '../../../evals/ifeval/text/text-tools.js';
import type { PromptRecord } from '../../../evals/ifeval/types.js';
import { wellFormed, type ResponseRepo, type StoredResponse, type StoredResponseWithPass } from '../db/response-repo.js';
import type { RunPolicy, RunRecord, RunRepo } from '../db/run-repo.js';
import type { WorkerClient } from '../worker-client.js';
import { backendLabel } from './backend-label.js';
import type { ModelSource } from './model-source.js';
import { readStopTokenIds } from './model-source.js';
import { runAccuracies } from './run-accuracies.js';
import { RunClock } from './run-clock.js';
import { promptsOverContext, runContextTokens } from './run-context.js';

/** A new run's id: its UTC start time to the second (sorts by age) and a random suffix, e.g. 20261202T174512-9fe751. */
export function newRunId(now = new Date()): string {
  return `${now.toISOString().replace(/[-:]/g, '').replace(/\..*/, '')}-${randomBytes(3).toString('hex')}`;
}

/** The worker calls the job makes (a WorkerClient in the app). */
export type RuntimeClient = Pick<WorkerClient, 'request' | 'ensureLoaded' | 'unload' | 'onToken' | 'onItem' | 'generation' | 'state' | 'restart'>;

export interface EvalRunDeps {
  readonly runs: RunRepo;
  readonly responses: ResponseRepo;
  readonly runtime: RuntimeClient;
  /** The whole dataset in file order; a run uses its first `policy.limit` rows. */
  readonly records: readonly PromptRecord[];
  readonly tools: TextTools;
}

export const DEFAULT_MAX_NEW_TOKENS = RUN_MAX_NEW_TOKENS.default;
export const DEFAULT_BATCH = RUN_BATCH.cpuDefault;

export interface NewEvalRun {
  readonly runId: string;
  readonly source: ModelSource;
  readonly backend?: 'auto' | 'cpu' | 'cuda';
  /** First N prompts; all when omitted. */
  readonly limit?: number;
  readonly batch?: number;
  readonly maxNewTokens?: number;
  /** CUDA device memory for resident experts; the backend's default when omitted. */
  readonly expertBudgetBytes?: number;
  /** CUDA device index; the first device when omitted. */
  readonly cudaDevice?: number;
  /** The run's label (label.ts: normalized and valid); none when omitted. */
  readonly label?: string;
  readonly appVersion: string;
  readonly datasetSha256: string;
}

export interface EvalRunHooks {
  readonly signal?: AbortSignal;
  readonly onProgress?: (p: RunProgress) => void;
  /** Each scored response as it is stored. */
  readonly onResponse?: (r: StoredResponseWithPass) => void;
  /** Called once the model is loaded in the worker, with the device it runs on. */
  readonly onLoaded?: (info: LoadedModelInfo) => void;
  /** Minimum milliseconds between streamed-partial progress events (default 500). */
  readonly partialIntervalMs?: number;
  /** A generate job with no token for this long is taken as hung (default STALL_MS). */
  readonly stallMs?: number;
}

/**
 * A generating worker that sends no token for this long is hung (a GPU that stopped answering, a deadlock): it is
 * restarted and the run fails, resumable. Far above the longest step a healthy worker takes (a step prefills at most
 * a few thousand prompt tokens, and every step gives each active prompt a token).
 */
export const STALL_MS = 10 * 60_000;

/** How a run wants its model loaded. */
export interface LoadChoices {
  readonly backend?: 'auto' | 'cpu' | 'cuda';
  /** KV room per sequence in tokens; the model's full context when omitted. */
  readonly maxContext?: number;
  /** Sequences generated together (the run's batch); the backend's default when omitted. */
  readonly maxSequences?: number;
  /** CUDA device memory for resident experts; null or omitted = the backend's default. */
  readonly expertBudgetBytes?: number | null;
  /** CUDA device index; null or omitted = the first device. */
  readonly cudaDevice?: number | null;
}

/**
 * Loads the run's model unless this worker process already has it with the same backend and expert budget and at
 * least `maxContext` tokens of KV room per sequence (the worker client keeps what it loaded).
 */
export function ensureModelLoaded(
  runtime: RuntimeClient,
  m: { modelDir: string; packedDir: string | null; weights: 'int4' | 'bf16' },
  { backend = 'auto', maxContext, maxSequences, expertBudgetBytes, cudaDevice }: LoadChoices = {},
): Promise<Result<LoadedModelInfo>> {
  return runtime.ensureLoaded({
    type: 'load', modelDir: m.modelDir, packedDir: m.packedDir, weights: m.weights, backend,
    ...(maxContext !== undefined ? { maxContext } : {}),
    ...(maxSequences !== undefined ? { maxSequences } : {}),
    ...(expertBudgetBytes != null ? { expertBudgetBytes } : {}),
    ...(cudaDevice != null ? { cudaDevice } : {}),
  });
}

/** How the restart of a worker the run gave up on went, for the run's error. */
function restartNote(restarted: Result<void>): string {
  return restarted.ok ? 'the runtime worker was restarted' : `restarting the runtime worker failed: ${restarted.error.message}`;
}

const ABORTED = Symbol('aborted');

/** `p`, or ABORTED as soon as `signal` aborts (p still settles, unobserved). */
function unlessAborted<T>(p: Promise<T>, signal: AbortSignal | undefined): Promise<T | typeof ABORTED> {
  if (!signal) return p;
  if (signal.aborted) return Promise.resolve(ABORTED);
  return new Promise((resolve, reject) => {
    const onAbort = (): void => resolve(ABORTED);
    signal.addEventListener('abort', onAbort, { once: true });
    p.then(
      (v) => {
        signal.removeEventListener('abort', onAbort);
        resolve(v);
      },
      (e: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(e instanceof Error ? e : new Error(String(e)));
      },
    );
  });
}

function checkRange(name: string, v: number, lo: number, hi: number): void {
  if (!Number.isInteger(v) || v < lo || v > hi) throw new Error(`eval-run: ${name} must be an integer in ${lo}..${hi}, got ${v}`);
}

/** Records a queued run with its policy (stop ids read from the model's files); the model is loaded when it executes. */
export async function createEvalRun(deps: EvalRunDeps, req: NewEvalRun): Promise<RunRecord> {
  const total = Math.min(req.limit ?? deps.records.length, deps.records.length);
  if (req.limit !== undefined) checkRange('limit', req.limit, 1, deps.records.length);
  const batch = req.batch ?? DEFAULT_BATCH;
  checkRange('batch', batch, RUN_BATCH.min, RUN_BATCH.max);
  const maxNewTokens = req.maxNewTokens ?? DEFAULT_MAX_NEW_TOKENS;
  checkRange('max new tokens', maxNewTokens, RUN_MAX_NEW_TOKENS.min, RUN_MAX_NEW_TOKENS.max);
  if (req.expertBudgetBytes !== undefined) checkRange('expert budget bytes', req.expertBudgetBytes, 1, Number.MAX_SAFE_INTEGER);
  if (req.cudaDevice !== undefined) checkRange('CUDA device', req.cudaDevice, 0, MAX_CUDA_DEVICE);
  const labelProblem = req.label === undefined ? null : labelRefusal(req.label);
  if (labelProblem) throw new Error(`eval-run: ${labelProblem}`);
  const policy: RunPolicy = {
    decoding: 'greedy',
    maxNewTokens,
    batch,
    stopTokenIds: await readStopTokenIds(req.source.modelDir),
    limit: req.limit ?? null,
    chatTemplate: chatTemplateSource(req.source.modelDir),
    requestedBackend: req.backend ?? 'auto',
    expertBudgetBytes: req.expertBudgetBytes ?? null,
    cudaDevice: req.cudaDevice ?? null,
  };
  return deps.runs.create({
    id: req.runId,
    modelId: req.source.modelId,
    modelRepo: req.source.repo,
    modelRevision: req.source.revision,
    modelDir: req.source.modelDir,
    packedDir: req.source.packedDir,
    weights: req.source.weights,
    manifestSha256: req.source.manifestSha256,
    manifestJson: req.source.manifestJson,
    backend: 'pending',
    deviceLabel: 'pending',
    residency: 'pending',
    policy,
    appVersion: req.appVersion,
    datasetSha256: req.datasetSha256,
    total,
    label: req.label ?? null,
  });
}

/**
 * Seconds left in a run, from the prompts finished since generation started (loading the model excluded). Under
 * continuous batching the first prompts finish while `wave` others are part done, so the rate is known only once a
 * wave has finished: null until then.
 */
export function estimateEtaSeconds(e: {
  readonly left: number;
  readonly finished: number;
  readonly wave: number;
  readonly generatingSeconds: number | null;
}): number | null {
  if (e.left === 0) return 0;
  if (e.generatingSeconds === null || e.finished < Math.max(1, e.wave)) return null;
  return (e.generatingSeconds / e.finished) * e.left;
}

/**
 * Runs (or resumes) a run to completion, cancellation or failure, and returns its final record. Never throws for
 * worker or model problems: they end the run as failed with the message.
 */
export async function executeEvalRun(deps: EvalRunDeps, runId: string, hooks: EvalRunHooks = {}): Promise<RunRecord> {
  return new RunSession(deps, runId, hooks).execute();
}

/**
 * One session of a run (its first, or a resume), as phases: prepare (the worker up, every prompt within the model's
 * context), load, generate (one job for every prompt left, each response scored and stored as it finishes), finish.
 * A phase that ends the run returns the run as stored.
 */
class RunSession {
  private readonly run: RunRecord;
  private readonly records: readonly PromptRecord[];
  private readonly positions: ReadonlyMap<number, number>;
  private readonly todo: readonly PromptRecord[];
  private readonly todoByItemId: ReadonlyMap<string, PromptRecord>;
  private readonly wave: number;
  private readonly clock: RunClock;
  private done: number;
  private doneThisSession = 0;
  /** Set once the model is loaded: every later event names the device it runs on. */
  private device: { backendLabel: string; residency: string } | undefined;

  constructor(
    private readonly deps: EvalRunDeps,
    private readonly runId: string,
    private readonly hooks: EvalRunHooks,
  ) {
    this.run = deps.runs.require(runId);
    this.records = deps.records.slice(0, this.run.total);
    this.positions = new Map(deps.records.map((r, i) => [r.key, i]));
    const stored = deps.responses.storedKeys(runId);
    this.todo = this.records.filter((r) => !stored.has(r.key));
    this.todoByItemId = new Map(this.todo.map((r) => [String(r.key), r]));
    this.done = stored.size;
    this.wave = Math.min(this.run.policy.batch, this.todo.length);
    this.clock = new RunClock(deps.responses.figures(runId).wallMs);
  }

  async execute(): Promise<RunRecord> {
    this.deps.runs.markRunning(this.runId);
    this.progress('running');
    if (this.todo.length === 0) return this.end('completed');
    const maxContext = await this.prepare();
    if (typeof maxContext !== 'number') return maxContext;
    const ended = await this.load(maxContext);
    if (ended) return ended;
    return this.generate();
  }

  private progress(status: RunProgress['status'], extra: Partial<RunProgress> = {}): void {
    const { hooks, run, clock } = this;
    if (!hooks.onProgress) return;
    // The accuracies so far, with every event but the streamed partial texts (a live run shows them as they move).
    let accuracies: Accuracies | null | undefined;
    if (!extra.partial) {
      try {
        accuracies = runAccuracies(this.deps.responses, this.runId);
      } catch {
        accuracies = undefined; // the database failing; the run ends for it elsewhere
      }
    }
    hooks.onProgress({
      runId: this.runId,
      status,
      done: this.done,
      total: run.total,
      tokensPerSecond: clock.tokensPerSecond(),
      etaSeconds: estimateEtaSeconds({ left: run.total - this.done, finished: this.doneThisSession, wave: this.wave, generatingSeconds: clock.generatingSeconds() }),
      elapsedSeconds: clock.elapsedSeconds(),
      ...(this.device ?? {}),
      ...(accuracies !== undefined ? { accuracies } : {}),
      ...extra,
    });
  }

  private end(status: 'completed' | 'cancelled' | 'failed', error?: string): RunRecord {
    this.deps.runs.finish(this.runId, status, error);
    this.progress(status, error !== undefined ? { error } : {});
    return this.deps.runs.require(this.runId);
  }

  private fail(message: string): RunRecord {
    return this.end('failed', message);
  }

  /** The worker up and every prompt left within the model's context: the context to load with, or the run ended. */
  private async prepare(): Promise<number | RunRecord> {
    const { runtime } = this.deps;
    if (runtime.state === 'crashed') {
      const restarted = await runtime.restart();
      if (!restarted.ok) return this.fail(`restarting the runtime worker failed: ${restarted.error.message}`);
    }
    let maxContext: number;
    let overContext: Awaited<ReturnType<typeof promptsOverContext>>;
    try {
      maxContext = await runContextTokens(this.run.modelDir, this.records.map((r) => r.prompt), this.run.policy.maxNewTokens);
      overContext = await promptsOverContext(this.run.modelDir, this.todo.map((r) => r.prompt));
    } catch (e) {
      return this.fail(`reading the model's tokenizer failed: ${(e as Error).message}`);
    }
    if (overContext.over.length > 0) return this.fail(overContextMessage(overContext, this.todo));
    return maxContext;
  }

  /** Loads the model (or finds it loaded) and names the device from here on; the run as ended, when it ended. */
  private async load(maxContext: number): Promise<RunRecord | undefined> {
    const { run, runId } = this;
    // Loading a large model takes a while: a cancel ends the run at once and leaves the load to finish in the worker
    // (a resume waits for it rather than loading again).
    const loaded = await unlessAborted(
      ensureModelLoaded(this.deps.runtime, run, {
        backend: run.policy.requestedBackend ?? 'auto',
        maxContext,
        maxSequences: run.policy.batch,
        expertBudgetBytes: run.policy.expertBudgetBytes ?? null,
        cudaDevice: run.policy.cudaDevice ?? null,
      }),
      this.hooks.signal,
    );
    if (loaded === ABORTED) return this.end('cancelled');
    if (!loaded.ok) return this.fail(`loading the model failed: ${loaded.error.code}: ${loaded.error.message}`);
    if (loaded.value.deviceLabel !== run.deviceLabel || loaded.value.backend !== run.backend || loaded.value.residency !== run.residency) {
      this.deps.runs.updateDevice(runId, loaded.value.backend, loaded.value.deviceLabel, loaded.value.residency);
    }
    this.hooks.onLoaded?.(loaded.value);
    this.device = { backendLabel: backendLabel(loaded.value.backend, loaded.value.deviceLabel), residency: loaded.value.residency };
    this.progress('running');
    return undefined;
  }

  /**
   * One generate job for every prompt left, at most `batch` generating at once: a prompt starts as soon as another
   * ends, and each response is scored and stored as soon as it finishes, so a crash or cancel loses only the
   * responses still being generated. Ends the run.
   */
  private async generate(): Promise<RunRecord> {
    const { responses, runtime, tools } = this.deps;
    const { run, runId, hooks, clock, todo } = this;
    let currentJob: string | undefined;
    const onAbort = (): void => {
      if (currentJob) void runtime.request({ type: 'cancel', jobId: currentJob });
    };
    hooks.signal?.addEventListener('abort', onAbort);
    const inflight = new Map<string, number[]>();
    const stopIds = new Set(run.policy.stopTokenIds);
    let lastPartial = 0;
    let decoding = false;
    let lastActivity = performance.now();
    let watchdog: NodeJS.Timeout | undefined;
    const stopTokens = runtime.onToken((e) => {
      if (e.jobId !== currentJob) return;
      const now = performance.now();
      lastActivity = now;
      // As the stored figures count: a stop token ends a response without being part of it.
      if (!stopIds.has(e.tokenId)) clock.countToken();
      const ids = inflight.get(e.itemId);
      ids?.push(e.tokenId);
      if (!hooks.onProgress || decoding || now - lastPartial < (hooks.partialIntervalMs ?? 500) || !ids) return;
      lastPartial = now;
      decoding = true;
      const key = Number(e.itemId);
      void runtime.request({ type: 'decode', tokenIds: [...ids], prefix: true }).then((r) => {
        decoding = false;
        // The prompt may have finished (and its response been shown) while the text was being decoded.
        if (r.ok && e.jobId === currentJob && inflight.has(e.itemId)) this.progress('running', { partial: { key, text: r.value } });
      });
    });
    let storeError: Error | undefined;
    let figuresStored = false;
    const stopItems = runtime.onItem((e) => {
      if (e.jobId !== currentJob || storeError) return;
      let key: number;
      try {
        const row = scoreItem(this.todoByItemId, e.item, this.positions, tools);
        const wallMs = clock.unstoredMs();
        responses.insertResponses(runId, [row], { generatedTokens: e.item.tokenIds.length, wallMs });
        clock.markStored(wallMs);
        key = row.key;
      } catch (err) {
        storeError = err as Error;
        void runtime.request({ type: 'cancel', jobId: e.jobId });
        return;
      }
      inflight.delete(e.item.itemId);
      this.done += 1;
      this.doneThisSession += 1;
      // The response is stored: a listener that throws (a window closing) must not fail the run.
      try {
        const full = hooks.onResponse ? responses.get(runId, key) : undefined;
        if (full) hooks.onResponse?.(full);
        this.progress('running');
      } catch {
        // nothing to undo
      }
    });
    try {
      const encoded = await runtime.request({ type: 'encode-chat', prompts: todo.map((r) => r.prompt) });
      if (!encoded.ok) return this.fail(`tokenizing prompts failed: ${encoded.error.code}: ${encoded.error.message}`);
      if (!hooks.signal?.aborted) {
        currentJob = `${runId}#${this.done}`;
        for (const r of todo) inflight.set(String(r.key), []);
        clock.start();
        lastActivity = performance.now();
        const stallMs = hooks.stallMs ?? STALL_MS;
        let stallRestart: Promise<Result<void>> | undefined;
        watchdog = setInterval(() => {
          if (stallRestart || performance.now() - lastActivity < stallMs) return;
          stallRestart = runtime.restart();
        }, Math.min(stallMs / 4, 30_000));
        const gen = await runtime.request({
          type: 'generate',
          jobId: currentJob,
          items: todo.map((r, i) => ({ itemId: String(r.key), tokenIds: encoded.value[i]?.tokenIds ?? [] })),
          policy: {
            decoding: 'greedy', maxNewTokens: run.policy.maxNewTokens, stopTokenIds: run.policy.stopTokenIds,
            batch: run.policy.batch,
          },
        });
        currentJob = undefined;
        if (stallRestart) {
          return this.fail(
            `generation stopped: no token for ${Math.round(stallMs / 1000)} s, so the runtime worker was taken as hung; ` +
              `${restartNote(await stallRestart)} (resume the run to continue)`,
          );
        }
        if (storeError) return this.fail(`eval-run: storing a response failed: ${storeError.message}`);
        if (!gen.ok && gen.error.code === 'DEVICE_FAULT') {
          // The worker's device context is lost; a fresh worker lets a resumed run (or the next one) load again.
          return this.fail(`generation failed: ${gen.error.code}: ${gen.error.message}; ${restartNote(await runtime.restart())}`);
        }
        // A cancel that had to restart a stuck worker ends the job this way: still a cancel.
        if (!gen.ok && gen.error.code === 'WORKER_CRASHED' && hooks.signal?.aborted) return this.end('cancelled');
        if (!gen.ok) return this.fail(`generation failed: ${gen.error.code}: ${gen.error.message}`);
        // Every finished item was reported before the reply; one that was not is a worker bug, not a response to drop.
        const stored = responses.storedKeys(runId);
        const missing = gen.value.items.filter((it) => it.finishReason !== 'cancelled' && !stored.has(Number(it.itemId)));
        if (missing.length > 0) return this.fail(`eval-run: the worker finished ${missing.length} prompts without reporting them`);
        responses.addJobFigures(runId, {
          wallMs: clock.unstoredOf(gen.value.wallMs),
          peakMemoryBytes: gen.value.peakMemoryBytes, peakMemoryScope: gen.value.peakMemoryScope, h2dBytes: gen.value.h2dBytes,
          expertCache: gen.value.expertCache ?? null,
        });
        figuresStored = true;
      }
    } catch (e) {
      return this.fail(`eval-run: ${(e as Error).message}`);
    } finally {
      clearInterval(watchdog);
      currentJob = undefined;
      // A job that ended without the worker's figures (a crash, a device fault, an error) still generated the tokens
      // stored for it: its time as main measured it keeps the run's throughput honest.
      if (clock.started && !figuresStored) {
        try {
          responses.addJobFigures(runId, { wallMs: clock.takeUnstoredMs(), peakMemoryBytes: 0, peakMemoryScope: null, h2dBytes: 0 });
        } catch {
          // the database is what failed; the run is already failing for it
        }
      }
      if (clock.started) {
        try {
          clock.end(responses.figures(runId).wallMs);
        } catch {
          // as above; the events go on with main's own measure
        }
      }
      stopTokens();
      stopItems();
      hooks.signal?.removeEventListener('abort', onAbort);
    }
    return this.end(this.done < run.total ? 'cancelled' : 'completed');
  }
}

/** Why a run cannot start when some prompts do not fit the model's context (a resume would fail the same way). */
function overContextMessage(o: Awaited<ReturnType<typeof promptsOverContext>>, todo: readonly PromptRecord[]): string {
  const shown = o.over.slice(0, 5).map(({ index, tokens }) => `key ${todo[index]?.key ?? '?'} (${tokens} tokens)`);
  const more = o.over.length > shown.length ? ` and ${o.over.length - shown.length} more` : '';
  return (
    `${o.over.length === 1 ? 'a prompt is' : `${o.over.length} prompts are`} longer after the chat template than the model's ` +
    `context of ${o.limit} tokens (max_position_embeddings in config.json), so the model cannot generate for ` +
    `${o.over.length === 1 ? 'it' : 'them'}: ${shown.join(', ')}${more}`
  );
}

function scoreItem(
  byItemId: ReadonlyMap<string, PromptRecord>,
  item: GenerationItemResult,
  positions: ReadonlyMap<number, number>,
  tools: TextTools,
): StoredResponse {
  const record = byItemId.get(item.itemId);
  if (!record) throw new Error(`the worker answered for unknown prompt key ${item.itemId}`);
  // Scored as stored, so that re-scoring the stored text (verify) gives the same verdicts.
  const response = wellFormed(item.text);
  const verdicts = scorePrompt(record, response, tools);
  return {
    key: record.key,
    position: positions.get(record.key) ?? 0,
    prompt: record.prompt,
    response,
    tokens: item.tokenIds.length,
    finishReason: item.finishReason,
    ttftMs: item.ttftMs >= 0 ? item.ttftMs : null,
    decodeTokensPerSecond: item.decodeTokensPerSecond > 0 ? item.decodeTokensPerSecond : null,
    verdicts: record.instruction_id_list.map((id, i) => ({
      instructionId: id,
      kwargs: record.kwargs[i] ?? {},
      strict: verdicts.strict[i] ?? false,
      loose: verdicts.loose[i] ?? false,
    })),
  };
}
