import type {
  CompareRequest,
  DeletedRun,
  DeleteRunRequest,
  EmitEvent,
  ResponseDetail,
  ResponsePage,
  ResponseQuery,
  ResponseRef,
  ResponseRow,
  RunComparison,
  RunDetail,
  RunPerformance,
  RunRef,
  RunsApi,
  RunSummary,
  SetRunLabelRequest,
  StartRunRequest,
} from '../../common/ipc-contract.js';
import type { Result } from '../../common/result.js';
import { readLabel } from '../../common/label.js';
import { err, ok } from '../../common/result.js';
import { dataLayout } from '../data-dir.js';
import type { ResponseRepo, StoredResponseWithPass } from '../db/response-repo.js';
import type { RunRecord, RunRepo } from '../db/run-repo.js';
import type { EvalInputs } from '../jobs/eval-inputs.js';
import type { RuntimeClient } from '../jobs/eval-run.js';
import { deleteExportFiles } from '../export/export-files.js';
import { backendLabel } from '../jobs/backend-label.js';
import { executeEvalRun, newRunId } from '../jobs/eval-run.js';
import { startEvalRun } from '../jobs/run-start.js';
import { resolveModelSource, resumeProblem } from '../jobs/model-source.js';
import { accuraciesOf, runIntervals } from '../jobs/run-accuracies.js';
import { parseQualityReport } from '../prep/quality-report.js';
import { readyVariant } from './models-service.js';
import type { TextTools } from '../../../evals/ifeval/text/text-tools.js';
import { verdictsWithFindings } from './response-findings.js';
import { compareResponses, preview } from './run-compare.js';
import { ServiceError, toResult } from './service-result.js';

export interface RunsServiceOptions {
  readonly runs: RunRepo;
  readonly responses: ResponseRepo;
  readonly runtime: RuntimeClient;
  readonly dataDir: string;
  readonly appVersion: string;
  readonly emit: EmitEvent;
  /** The dataset and text tools, loaded on first use. */
  readonly inputs: () => Promise<EvalInputs>;
  /** How long a cancelled run's worker may take to stop before it is restarted (default CANCEL_GRACE_MS). */
  readonly cancelGraceMs?: number;
  /** Why the runtime is not free for a run (a performance campaign measuring), or null. */
  readonly busy?: () => string | null;
}

/** A worker ends a cancelled job within one step; one that has not after this long is stuck (a hung device call). */
export const CANCEL_GRACE_MS = 20_000;


export function toResponseRow(r: StoredResponseWithPass, instructionId?: string, tools: TextTools | null = null): ResponseRow {
  const mine = instructionId ? verdictsWithFindings(r, tools, instructionId).filter((v) => v.instructionId === instructionId) : [];
  return {
    key: r.key,
    promptPreview: preview(r.prompt),
    responsePreview: preview(r.response),
    instructionIds: r.verdicts.map((v) => v.instructionId),
    strictPass: r.strictPass,
    loosePass: r.loosePass,
    tokens: r.tokens,
    finishReason: r.finishReason,
    ...(instructionId && mine.length > 0
      ? {
          instructionVerdict: {
            instructionId,
            strictPass: mine.every((v) => v.strict),
            loosePass: mine.every((v) => v.loose),
            finding: (mine.find((v) => !v.strict) ?? mine[0]!).finding,
          },
        }
      : {}),
  };
}

/** A stored run as lists show it, counted from its stored responses. */
export function runSummary(run: RunRecord, responses: ResponseRepo): RunSummary {
  const counts = responses.passCounts(run.id);
  return {
    id: run.id,
    modelId: run.modelId,
    modelRepo: run.modelRepo,
    modelRevision: run.modelRevision,
    weights: run.weights,
    status: run.status,
    backend: run.backend,
    backendLabel: backendLabel(run.backend, run.deviceLabel),
    createdAt: run.createdAt,
    finishedAt: run.finishedAt,
    done: counts.prompts,
    total: run.total,
    batch: run.policy.batch,
    accuracies: accuraciesOf(counts),
    error: run.error,
    imported: run.imported,
    label: run.label,
  };
}

/** A stored run as Results shows it: its summary, settings, per-instruction counts and figures. */
export function runDetail(run: RunRecord, responses: ResponseRepo): RunDetail {
  const f = responses.figures(run.id);
  const cuda = run.backend === 'cuda';
  return {
    ...runSummary(run, responses),
    residency: run.residency,
    policy: {
      maxNewTokens: run.policy.maxNewTokens, batch: run.policy.batch, greedy: true, total: run.total,
      expertBudgetBytes: run.policy.expertBudgetBytes ?? null,
      cudaDevice: run.policy.cudaDevice ?? null,
    },
    byInstruction: responses.byInstruction(run.id),
    endings: responses.endings(run.id),
    intervals: runIntervals(responses, run.id),
    carriedQuality: run.qualityJson === null ? null : parseQualityReport(run.qualityJson),
    figures: {
      ttftMs: f.meanTtftMs,
      decodeTokensPerSecond: f.meanDecodeTokensPerSecond,
      peakMemoryBytes: cuda ? f.peakMemoryBytes : null,
      peakMemoryScope: cuda ? f.peakMemoryScope : null,
      h2dBytes: cuda ? f.h2dBytes : null,
      expertCache: cuda ? f.expertCache : null,
      generatedTokens: f.generatedTokens,
      wallSeconds: f.wallMs / 1000,
    },
  };
}

/** One stored response as its detail shows it, each verdict with what decided it (null findings without `tools`). */
export function responseDetail(runId: string, r: StoredResponseWithPass, tools: TextTools | null): ResponseDetail {
  return {
    runId,
    key: r.key,
    prompt: r.prompt,
    response: r.response,
    tokens: r.tokens,
    finishReason: r.finishReason,
    ttftMs: r.ttftMs,
    decodeTokensPerSecond: r.decodeTokensPerSecond,
    strictPass: r.strictPass,
    loosePass: r.loosePass,
    verdicts: verdictsWithFindings(r, tools),
  };
}

/** Starting, cancelling and resuming runs (one at a time), and every query over stored runs. */
export class RunsService implements RunsApi {
  private active: { runId: string; controller: AbortController; done: Promise<RunRecord> } | undefined;
  /** A start or resume between its check and its launch (they await the model list, the inputs, the worker). */
  private starting = false;
  /** The run a resume in `starting` is about to launch. */
  private resuming: string | undefined;

  constructor(private readonly opts: RunsServiceOptions) {}

  /** The run in progress, if any (awaitable by tests and shutdown). */
  get activeRun(): { runId: string; done: Promise<RunRecord> } | undefined {
    return this.active;
  }

  private summary(run: RunRecord): RunSummary {
    return runSummary(run, this.opts.responses);
  }

  private detail(run: RunRecord): RunDetail {
    return runDetail(run, this.opts.responses);
  }

  private requireRun(runId: string): RunRecord {
    const run = this.opts.runs.get(runId);
    if (!run) throw new ServiceError('NOT_FOUND', `run ${runId} not found`);
    return run;
  }

  private launch(runId: string, inputs: EvalInputs): void {
    const controller = new AbortController();
    const done = executeEvalRun(
      { runs: this.opts.runs, responses: this.opts.responses, runtime: this.opts.runtime, records: inputs.records, tools: inputs.tools },
      runId,
      {
        signal: controller.signal,
        onProgress: (p) => this.opts.emit('runs:onDidProgress', p),
        onResponse: (r) => this.opts.emit('runs:onDidResponse', { runId, row: toResponseRow(r) }),
      },
    ).finally(() => {
      if (this.active?.runId === runId) this.active = undefined;
    });
    // executeEvalRun ends worker and model problems as a failed run itself; what escapes it (the database failing,
    // say) must still end the run as failed, not as an unhandled rejection.
    done.catch((error: unknown) => {
      const message = `the run stopped on an internal error: ${(error as Error).message}`;
      let total = 0;
      let stored = 0;
      let wallMs = 0;
      try {
        total = this.opts.runs.require(runId).total;
        stored = this.opts.responses.count(runId);
        wallMs = this.opts.responses.figures(runId).wallMs;
        this.opts.runs.finish(runId, 'failed', message);
      } catch {
        // The database is what failed; the next start of the app marks the run as interrupted.
      }
      this.opts.emit('runs:onDidProgress', {
        runId, status: 'failed', done: stored, total, tokensPerSecond: null, etaSeconds: null, elapsedSeconds: wallMs / 1000, error: message,
      });
    });
    this.active = { runId, controller, done };
  }

  /** Claims the one run slot before the first await, so that two starts (or resumes) cannot both pass the check. */
  private async claimRunSlot<T>(body: () => Promise<T>, resuming?: string): Promise<T> {
    if (this.active) throw new ServiceError('BAD_INPUT', `run ${this.active.runId} is still running; cancel it first`);
    if (this.starting) throw new ServiceError('BAD_INPUT', 'another run is being started; wait for it');
    const busy = this.opts.busy?.();
    if (busy) throw new ServiceError('BAD_INPUT', busy);
    this.starting = true;
    this.resuming = resuming;
    try {
      return await body();
    } finally {
      this.starting = false;
      this.resuming = undefined;
    }
  }

  start(req: StartRunRequest): Promise<Result<RunSummary>> {
    const { label, problem } = readLabel(req.label ?? '');
    if (problem) return Promise.resolve(err('BAD_INPUT', problem));
    return toResult(() => this.claimRunSlot(async () => {
      const variant = await readyVariant(this.opts.dataDir, req.modelId);
      const inputs = await this.opts.inputs();
      const source = await resolveModelSource(variant.preparedDir, variant.weights);
      const run = await startEvalRun(
        { runs: this.opts.runs, responses: this.opts.responses, runtime: this.opts.runtime, records: inputs.records, tools: inputs.tools },
        {
          runId: newRunId(),
          source,
          ...(req.batch !== undefined ? { batch: req.batch } : {}),
          ...(req.limit !== undefined ? { limit: req.limit } : {}),
          ...(req.maxNewTokens !== undefined ? { maxNewTokens: req.maxNewTokens } : {}),
          ...(req.expertBudgetMiB !== undefined ? { expertBudgetBytes: req.expertBudgetMiB * 2 ** 20 } : {}),
          ...(req.cudaDevice !== undefined ? { cudaDevice: req.cudaDevice } : {}),
          ...(label !== null ? { label } : {}),
          appVersion: this.opts.appVersion,
          datasetSha256: inputs.datasetSha256,
        },
        (p) =>
          p.kind === 'no-cuda'
            ? `CUDA device ${req.cudaDevice ?? 0} was chosen, but no CUDA device is usable: ${p.note}`
            : `CUDA device ${p.device} was chosen, but this machine has ${p.devices.map((d) => `${d.index}: ${d.name}`).join(', ')}`,
      );
      this.launch(run.id, inputs);
      return this.summary(this.opts.runs.require(run.id));
    }));
  }

  async cancel(req: RunRef): Promise<Result<void>> {
    const active = this.active;
    if (active?.runId !== req.runId) return err('NOT_FOUND', `run ${req.runId} is not running`);
    active.controller.abort();
    // Reply once the run has stopped (the worker ends its job within a step), so that a run shown as cancelled can be
    // resumed at once. A worker that does not stop is restarted: that ends its job, and the run keeps what it stored.
    let timer: ReturnType<typeof setTimeout> | undefined;
    const stopped = await Promise.race([
      active.done.then(() => true, () => true),
      new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), this.opts.cancelGraceMs ?? CANCEL_GRACE_MS))),
    ]);
    clearTimeout(timer);
    if (!stopped) {
      await this.opts.runtime.restart();
      await active.done.catch(() => undefined);
    }
    return ok(undefined);
  }

  resume(req: RunRef): Promise<Result<RunSummary>> {
    return toResult(() => this.claimRunSlot(async () => {
      const run = this.requireRun(req.runId);
      const inputs = await this.opts.inputs();
      const problem = await resumeProblem(run, inputs.datasetSha256);
      if (problem) throw new ServiceError(problem.code === 'MODEL_CHANGED' ? 'MODEL_INVALID' : 'BAD_INPUT', problem.message);
      this.launch(run.id, inputs);
      return this.summary(this.opts.runs.require(run.id));
    }, req.runId));
  }

  delete(req: DeleteRunRequest): Promise<Result<DeletedRun>> {
    return toResult(async () => {
      const live = this.active?.runId === req.runId || this.resuming === req.runId;
      const outcome = live ? ({ deleted: false, status: 'running' } as const) : this.opts.runs.delete(req.runId);
      if (!outcome.deleted) {
        if (outcome.status === 'missing') throw new ServiceError('NOT_FOUND', `run ${req.runId} not found`);
        throw new ServiceError('BAD_INPUT', `run ${req.runId} is ${outcome.status}: cancel it before deleting it`);
      }
      this.opts.emit('runs:onDidDelete', { runId: req.runId });
      const files = req.deleteExport
        ? await deleteExportFiles(dataLayout.exportsDir(this.opts.dataDir), req.runId)
        : { deleted: [], errors: [] };
      return { runId: req.runId, responses: outcome.responses, deletedFiles: files.deleted, fileErrors: files.errors };
    });
  }

  setLabel(req: SetRunLabelRequest): Promise<Result<RunSummary>> {
    return toResult(() => {
      const { label, problem } = readLabel(req.label);
      if (problem) throw new ServiceError('BAD_INPUT', problem);
      if (!this.opts.runs.setLabel(req.runId, label)) throw new ServiceError('NOT_FOUND', `run ${req.runId} not found`);
      this.opts.emit('runs:onDidLabel', { runId: req.runId, label });
      return this.summary(this.opts.runs.require(req.runId));
    });
  }

  list(): Promise<Result<readonly RunSummary[]>> {
    return toResult(() => this.opts.runs.list().map((r) => this.summary(r)));
  }

  get(req: RunRef): Promise<Result<RunDetail>> {
    return toResult(() => this.detail(this.requireRun(req.runId)));
  }

  async responses(req: ResponseQuery): Promise<Result<ResponsePage>> {
    const tools = req.instructionId ? await this.textTools() : null;
    return toResult(() => {
      this.requireRun(req.runId);
      const offset = req.offset ?? 0;
      const page = this.opts.responses.page(req.runId, {
        ...(req.instructionId ? { instructionId: req.instructionId } : {}),
        ...(req.verdict ? { verdict: req.verdict } : {}),
        ...(req.mode ? { mode: req.mode } : {}),
        ...(req.text ? { text: req.text } : {}),
        ...(req.finish ? { finish: req.finish } : {}),
        ...(req.sortBy ? { sortBy: req.sortBy } : {}),
        ...(req.descending ? { descending: true } : {}),
        offset,
        limit: req.limit ?? 50,
      });
      return { total: page.total, offset, items: page.items.map((r) => toResponseRow(r, req.instructionId, tools)) };
    });
  }

  performance(req: RunRef): Promise<Result<RunPerformance>> {
    return toResult(() => {
      this.requireRun(req.runId);
      return { runId: req.runId, points: this.opts.responses.performance(req.runId) };
    });
  }

  /** The scorer's text tools, which say what decided each verdict; null without the eval assets. */
  private textTools(): Promise<TextTools | null> {
    return this.opts.inputs().then(
      (inputs) => inputs.tools,
      () => null,
    );
  }

  async response(req: ResponseRef): Promise<Result<ResponseDetail>> {
    const tools = await this.textTools();
    return toResult(() => {
      this.requireRun(req.runId);
      const r = this.opts.responses.get(req.runId, req.key);
      if (!r) throw new ServiceError('NOT_FOUND', `run ${req.runId} has no response for key ${req.key}`);
      return responseDetail(req.runId, r, tools);
    });
  }

  compare(req: CompareRequest): Promise<Result<RunComparison>> {
    return toResult(() => {
      const a = this.detail(this.requireRun(req.runA));
      const b = this.detail(this.requireRun(req.runB));
      const { changed, stats } = compareResponses(this.opts.responses.all(req.runA), this.opts.responses.all(req.runB));
      return { a, b, changed, common: stats.common, stats };
    });
  }
}
