/**
 * Main's side of the runtime worker: spawns it through an injected spawner (Electron utilityProcess in the app,
 * a Node fork through tsx elsewhere), numbers requests, matches replies by seq and relays streamed events.
 */
import { fork } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import type { Result } from '../common/result.js';
import { assertNever, err } from '../common/result.js';
import type {
  ItemEvent,
  LoadedModelInfo,
  LogEvent,
  TokenEvent,
  WorkerMessage,
  WorkerRequest,
  WorkerRequestEnvelope,
  WorkerRequestType,
  WorkerResponseValues,
} from '../common/worker-protocol.js';
import { checkResponseValue, parseWorkerMessage } from '../common/worker-protocol.js';

/** A started worker process as the client sees it. */
export interface WorkerChannel {
  send(message: WorkerRequestEnvelope): void;
  onMessage(handler: (message: unknown) => void): void;
  /** Called once when the process ends, with its exit code or signal. */
  onExit(handler: (code: number | null, signal: string | null) => void): void;
  kill(): void;
}

export type WorkerSpawner = () => WorkerChannel;

const here = path.dirname(fileURLToPath(import.meta.url));

/** The worker entry next to this file: `index.ts` in the source tree, `index.js` when built. */
export function defaultWorkerEntry(): string {
  const ts = path.resolve(here, '..', 'worker', 'index.ts');
  return existsSync(ts) ? ts : path.resolve(here, '..', 'worker', 'index.js');
}

/** Spawns the worker as a Node child process; `.ts` entries run through tsx. */
export function forkSpawner(entry: string = defaultWorkerEntry(), env: NodeJS.ProcessEnv = process.env): WorkerSpawner {
  return () => {
    const child = fork(entry, [], {
      execArgv: entry.endsWith('.ts') ? ['--import', 'tsx'] : [],
      env,
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      serialization: 'advanced',
    });
    // A send to a worker that has just died fails with EPIPE or a closed channel, reported as an 'error' event that
    // would end this process if nobody listened: the exit handler fails the pending requests instead.
    child.on('error', () => undefined);
    return {
      send: (m) => {
        if (child.connected) child.send(m, () => undefined);
      },
      onMessage: (h) => child.on('message', h),
      onExit: (h) => child.once('exit', (code, signal) => h(code, signal)),
      kill: () => void child.kill(),
    };
  };
}

/** The subset of Electron's `utilityProcess` the spawner uses, so this file does not import electron. */
export interface UtilityProcessLike {
  fork(
    modulePath: string,
    args?: string[],
    options?: { serviceName?: string; stdio?: 'inherit' | 'pipe' | 'ignore' },
  ): {
    postMessage(message: unknown): void;
    on(event: 'message', listener: (message: unknown) => void): unknown;
    once(event: 'exit', listener: (code: number) => void): unknown;
    kill(): boolean;
  };
}

/** Spawns the worker as an Electron utilityProcess (pass `require('electron').utilityProcess`). */
export function utilityProcessSpawner(utilityProcess: UtilityProcessLike, entry: string): WorkerSpawner {
  return () => {
    const child = utilityProcess.fork(entry, [], { serviceName: 'Horizon runtime', stdio: 'inherit' });
    return {
      send: (m) => child.postMessage(m),
      onMessage: (h) => void child.on('message', h),
      onExit: (h) => void child.once('exit', (code) => h(code, null)),
      kill: () => void child.kill(),
    };
  };
}

interface Pending {
  readonly type: WorkerRequestType;
  resolve(result: Result<unknown>): void;
}

export type WorkerState = 'idle' | 'starting' | 'ready' | 'crashed' | 'disposed';

export interface WorkerClientOptions {
  /** Milliseconds to wait for the worker's ready event. */
  readonly startTimeoutMs?: number;
}

/** One runtime worker; requests resolve to `Result`s, never throw. */
export class WorkerClient {
  private channel: WorkerChannel | undefined;
  private nextSeq = 1;
  private readonly pending = new Map<number, Pending>();
  private readonly tokenListeners = new Set<(e: TokenEvent) => void>();
  private readonly itemListeners = new Set<(e: ItemEvent) => void>();
  private readonly logListeners = new Set<(e: LogEvent) => void>();
  private readonly crashListeners = new Set<(reason: string) => void>();
  private starting: Promise<Result<void>> | undefined;
  /** Ends the start in progress (its worker is being stopped) with this reason. */
  private endStart: ((reason: string) => void) | undefined;
  private stateValue: WorkerState = 'idle';
  private lastCrash = '';
  private pid = 0;
  private spawnCount = 0;
  /**
   * The worker's last load, pending or answered: what it asked for, its answer, and the worker process (generation)
   * that loaded it, known once answered. A restarted worker holds no model, whatever this says.
   */
  private lastLoad:
    | { what: string; maxSequences: number | undefined; result: Promise<Result<LoadedModelInfo>>; generation: number | null }
    | undefined;

  constructor(
    private readonly spawner: WorkerSpawner,
    private readonly options: WorkerClientOptions = {},
  ) {}

  get state(): WorkerState {
    return this.stateValue;
  }

  /** Counts spawned workers: state held by the worker (a loaded model) belongs to one generation. */
  get generation(): number {
    return this.spawnCount;
  }

  /** The worker's process id once ready (0 before). */
  get workerPid(): number {
    return this.pid;
  }

  /** Starts the worker if it is idle; after a crash use `restart()`. */
  start(): Promise<Result<void>> {
    if (this.stateValue === 'ready') return Promise.resolve({ ok: true, value: undefined });
    if (this.starting) return this.starting;
    if (this.stateValue === 'crashed') return Promise.resolve(err('WORKER_CRASHED', this.lastCrash));
    if (this.stateValue === 'disposed') return Promise.resolve(err('INTERNAL', 'the worker client was disposed'));
    const starting = this.spawn().finally(() => {
      if (this.starting === starting) this.starting = undefined;
    });
    this.starting = starting;
    return starting;
  }

  /**
   * Loads a model unless this worker process already has it (same folders, weights, backend, expert budget and device)
   * with at least `maxSequences` and `maxContext` room. A load still in flight counts: a run cancelled while its model
   * loaded, then resumed, waits for that load instead of starting another.
   */
  async ensureLoaded(req: Extract<WorkerRequest, { type: 'load' }>): Promise<Result<LoadedModelInfo>> {
    const what = [req.modelDir, req.packedDir ?? '', req.weights, req.backend, req.expertBudgetBytes ?? 'auto', req.cudaDevice ?? 'first'].join('|');
    const last = this.lastLoad;
    const sameWorker = (): boolean => last?.generation === this.generation;
    const roomy = (n: number | undefined) => req.maxSequences === undefined || (n ?? 0) >= req.maxSequences;
    if (last && last.what === what && (last.generation === null || sameWorker()) && roomy(last.maxSequences)) {
      const r = await last.result;
      if (r.ok && this.lastLoad === last && sameWorker() && (req.maxContext === undefined || r.value.maxContext >= req.maxContext)) return r;
    }
    const result = this.request(req);
    // The worker drops its current model when a load starts: after a failed load it holds none.
    const mine = { what, maxSequences: req.maxSequences, result, generation: null as number | null };
    this.lastLoad = mine;
    const r = await result;
    if (this.lastLoad === mine) {
      if (r.ok) mine.generation = this.generation;
      else this.lastLoad = undefined;
    }
    return r;
  }

  /** Lets go of the model (its files stay mapped while loaded, which Windows will not delete); the next load loads. */
  async unload(): Promise<void> {
    this.lastLoad = undefined;
    if (this.stateValue === 'crashed') return;
    await this.request({ type: 'unload' });
  }

  /** Kills the worker (if running) and starts a fresh one; a loaded model must be loaded again. */
  async restart(): Promise<Result<void>> {
    this.stopChannel('restarted by the client');
    this.stateValue = 'idle';
    return this.start();
  }

  private spawn(): Promise<Result<void>> {
    this.stateValue = 'starting';
    this.spawnCount++;
    return new Promise((resolve) => {
      let channel: WorkerChannel;
      try {
        channel = this.spawner();
      } catch (e) {
        this.stateValue = 'crashed';
        this.lastCrash = `the runtime worker could not be started: ${(e as Error).message}`;
        resolve(err('WORKER_CRASHED', this.lastCrash));
        return;
      }
      this.channel = channel;
      this.endStart = (reason) => {
        clearTimeout(timer);
        resolve(err('WORKER_CRASHED', `the runtime worker was stopped while starting (${reason})`));
      };
      const timer = setTimeout(() => {
        if (this.stateValue !== 'starting' || this.channel !== channel) return;
        this.stopChannel('start timed out');
        this.stateValue = 'crashed';
        this.lastCrash = `the runtime worker did not start within ${this.options.startTimeoutMs ?? 60_000} ms`;
        resolve(err('WORKER_CRASHED', this.lastCrash));
      }, this.options.startTimeoutMs ?? 60_000);
      channel.onMessage((raw) => {
        if (this.channel !== channel) return;
        const parsed = parseWorkerMessage(raw);
        if (!parsed.ok) {
          this.emitLog({ event: 'log', level: 'error', message: `runtime worker sent an invalid message: ${parsed.problem}` });
          this.failInvalidReply(raw, parsed.problem);
          return;
        }
        const msg = parsed.value;
        if ('event' in msg && msg.event === 'ready') {
          clearTimeout(timer);
          this.pid = msg.pid;
          this.stateValue = 'ready';
          this.endStart = undefined;
          resolve({ ok: true, value: undefined });
          return;
        }
        this.dispatch(msg);
      });
      channel.onExit((code, signal) => {
        clearTimeout(timer);
        if (this.channel !== channel) return;
        this.channel = undefined;
        const how = signal ? `signal ${signal}` : `exit code ${String(code)}`;
        this.lastCrash = `the runtime worker stopped unexpectedly (${how})`;
        const wasStarting = this.stateValue === 'starting';
        this.stateValue = 'crashed';
        this.failPending(this.lastCrash);
        if (wasStarting) resolve(err('WORKER_CRASHED', this.lastCrash));
        for (const l of this.crashListeners) l(this.lastCrash);
      });
    });
  }

  private dispatch(msg: WorkerMessage): void {
    if ('seq' in msg) {
      const p = this.pending.get(msg.seq);
      if (!p) return;
      this.pending.delete(msg.seq);
      if (!msg.ok) {
        p.resolve({ ok: false, error: msg.error });
        return;
      }
      const problem = checkResponseValue(p.type, msg.value);
      p.resolve(problem ? err('INTERNAL', `the runtime worker answered '${p.type}' with an invalid value: ${problem}`) : { ok: true, value: msg.value });
      return;
    }
    switch (msg.event) {
      case 'token':
        for (const l of this.tokenListeners) l(msg);
        return;
      case 'item':
        for (const l of this.itemListeners) l(msg);
        return;
      case 'log':
        this.emitLog(msg);
        return;
      case 'ready':
        return;
      default:
        throw assertNever(msg);
    }
  }

  /** A reply that names a pending request but does not parse ends that request, which would otherwise wait forever. */
  private failInvalidReply(raw: unknown, problem: string): void {
    const seq = typeof raw === 'object' && raw !== null ? (raw as { seq?: unknown }).seq : undefined;
    const p = typeof seq === 'number' ? this.pending.get(seq) : undefined;
    if (!p || typeof seq !== 'number') return;
    this.pending.delete(seq);
    p.resolve(err('INTERNAL', `the runtime worker answered '${p.type}' with an invalid message: ${problem}`));
  }

  private emitLog(e: LogEvent): void {
    for (const l of this.logListeners) l(e);
  }

  private failPending(message: string): void {
    const all = [...this.pending.values()];
    this.pending.clear();
    for (const p of all) p.resolve(err('WORKER_CRASHED', `${message} while handling '${p.type}'`));
  }

  private stopChannel(reason: string): void {
    const ch = this.channel;
    this.channel = undefined;
    // A start in progress belongs to this worker: it ends now, and the next start spawns afresh.
    if (this.stateValue === 'starting') {
      this.endStart?.(reason);
      this.starting = undefined;
    }
    this.endStart = undefined;
    this.failPending(`the runtime worker was stopped (${reason})`);
    ch?.kill();
  }

  /** Sends a request, starting the worker first if it is idle. */
  async request<T extends WorkerRequestType>(
    request: Extract<WorkerRequest, { type: T }>,
  ): Promise<Result<WorkerResponseValues[T]>> {
    const started = await this.start();
    if (!started.ok) return started;
    const channel = this.channel;
    if (!channel) return err('WORKER_CRASHED', this.lastCrash || 'the runtime worker is not running');
    const seq = this.nextSeq++;
    return new Promise((resolve) => {
      this.pending.set(seq, { type: request.type, resolve: resolve as (r: Result<unknown>) => void });
      try {
        channel.send({ seq, request });
      } catch (e) {
        this.pending.delete(seq);
        resolve(err('WORKER_CRASHED', `could not send '${request.type}' to the runtime worker: ${(e as Error).message}`));
      }
    });
  }

  onToken(listener: (e: TokenEvent) => void): () => void {
    this.tokenListeners.add(listener);
    return () => this.tokenListeners.delete(listener);
  }

  /** Each generate job's items as they finish, before the job's reply. */
  onItem(listener: (e: ItemEvent) => void): () => void {
    this.itemListeners.add(listener);
    return () => this.itemListeners.delete(listener);
  }

  onLog(listener: (e: LogEvent) => void): () => void {
    this.logListeners.add(listener);
    return () => this.logListeners.delete(listener);
  }

  /** Called with a description (exit code or signal) each time the worker dies unexpectedly. */
  onCrash(listener: (reason: string) => void): () => void {
    this.crashListeners.add(listener);
    return () => this.crashListeners.delete(listener);
  }

  /** Stops the worker for good; pending requests fail. */
  dispose(): void {
    this.stopChannel('client disposed');
    this.stateValue = 'disposed';
  }
}
