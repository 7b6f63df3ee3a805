/**
 * An in-memory implementation of the IPC contract for UI tests: preparation and runs advance on timers and emit
 * the same events the real services do. Test code only; the app never ships it.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';

import type {
  Accuracies,
  Api,
  AssetKind,
  ExportFile,
  AssetStatus,
  EmitEvent,
  GpuInfo,
  InstructionTypeRow,
  PreparedModel,
  ResponseDetail,
  ResponseRow,
  RunDetail,
  RunSummary,
  ZipSubject,
} from '../../electron/common/ipc-contract.js';
import { isLiveStatus } from '../../electron/common/ipc-contract.js';
import { aggregateCampaign, campaignConfigs, PERF_SETTINGS, type PerfCampaign, type PerfRequestRecord } from '../../electron/common/perf-campaign.js';
import { err, ok } from '../../electron/common/result.js';
import { readLabel } from '../../electron/common/label.js';
import type { FinishReason } from '../../electron/common/worker-protocol.js';
import type { StoredResponseWithPass } from '../../electron/main/db/response-repo.js';
import { accuracyIntervals } from '../../electron/common/accuracy-intervals.js';
import { compareResponses } from '../../electron/main/services/run-compare.js';

interface Prompt {
  key: number;
  prompt: string;
  instruction_id_list: string[];
  kwargs: Record<string, unknown>[];
}

interface StoredResponse {
  row: ResponseRow;
  detail: ResponseDetail;
}

interface FakeRun {
  summary: RunSummary;
  responses: StoredResponse[];
  prompts: Prompt[];
  maxNewTokens: number;
  batch: number;
  timer: NodeJS.Timeout | null;
  /** The device the run "loaded" on, named in progress once generating. */
  device: { backend: 'cpu' | 'cuda'; backendLabel: string; residency: string };
  /** Generating time of the sessions before this one, as the real run keeps it with its figures. */
  wallMs: number;
  /** When this session started generating; null between sessions. */
  sessionStartedAt: number | null;
  /** The generating time of the session that ended last (its speed stays on show). */
  lastSessionMs: number;
  sessionTokens: number;
}

export interface FakeApiOptions {
  readonly sharedDir: string;
  readonly dataDir?: string;
  /** Milliseconds between simulated steps. */
  readonly tickMs?: number;
  /** Milliseconds between a preparation's 16 steps (default tickMs): long enough to look at it while it runs. */
  readonly prepTickMs?: number;
  /** Stands in for the desktop file dialog: the path it "chooses" per dialog title (no dialogs when omitted). */
  readonly pickPaths?: Readonly<Record<string, string>>;
  /** CUDA devices the system check reports (none: the CPU backend). */
  readonly gpus?: readonly GpuInfo[];
  /** Free bytes the system check reports for the data folder (default 52 GB). */
  readonly freeBytes?: number;
}

// Deterministic "verdicts": a response passes an instruction unless key * (index + 1) is divisible by 3.
export function verdict(key: number, index: number, loose: boolean): boolean {
  const n = key * (index + 1);
  return loose ? n % 5 !== 0 : n % 3 !== 0;
}

/**
 * A run capped at 48 to 63 new tokens stands for the model under other settings, so that History's comparisons have
 * changed prompts: it words every answer otherwise from the same start, and flips the strict verdict of an even key's
 * first instruction.
 */
const otherSettings = (maxNewTokens: number): boolean => maxNewTokens >= 48 && maxNewTokens < 64;

/** What a ZIP of this run or campaign says it holds, as the real services read it back. */
function subjectOf(
  r: { id: string; label: string | null; createdAt: string; backendLabel: string; model: { repo: string; revision: string; weights: 'int4' | 'bf16' } },
  modelId: string,
): ZipSubject {
  return {
    id: r.id, label: r.label, modelRepo: r.model.repo, modelRevision: r.model.revision, modelId, weights: r.model.weights,
    backendLabel: r.backendLabel, createdAt: r.createdAt,
  };
}

function accuracies(responses: readonly StoredResponse[]): Accuracies | null {
  if (responses.length === 0) return null;
  let ps = 0;
  let pl = 0;
  let is = 0;
  let il = 0;
  let n = 0;
  for (const r of responses) {
    if (r.detail.strictPass) ps++;
    if (r.detail.loosePass) pl++;
    for (const v of r.detail.verdicts) {
      n++;
      if (v.strict) is++;
      if (v.loose) il++;
    }
  }
  return {
    promptStrict: ps / responses.length,
    promptLoose: pl / responses.length,
    instructionStrict: is / n,
    instructionLoose: il / n,
  };
}

export function createFakeApi(opts: FakeApiOptions): { api: Api; setEmit(emit: EmitEvent): void } {
  const tick = opts.tickMs ?? 40;
  const gpus = opts.gpus ?? [];
  const dataDir = opts.dataDir ?? '/tmp/horizon-fake';
  let emit: EmitEvent = () => {};
  const models: PreparedModel[] = [];
  const runs = new Map<string, FakeRun>();
  const assets = new Map<AssetKind, AssetStatus>([
    ['ifeval', { kind: 'ifeval', ready: false, path: `${dataDir}/assets/ifeval/input_data.jsonl`, detail: 'not imported' }],
    ['punkt', { kind: 'punkt', ready: false, path: `${dataDir}/assets/nltk/punkt_english`, detail: 'not imported' }],
  ]);
  const zips = new Map<string, { status: string; responses: readonly StoredResponse[]; total: number; run: FakeRun }>();
  const prepTimers = new Map<string, { timer: NodeJS.Timeout; step: () => 'resolve' | 'download' | 'verify' | 'pack' }>();
  let prompts: Prompt[] = [];
  let jobs = 0;
  let runCount = 0;
  let campaignCount = 0;
  let activeCampaign: string | null = null;
  const campaigns = new Map<string, { campaign: PerfCampaign; requests: PerfRequestRecord[] }>();
  /** Campaign ZIPs exported, by path: the campaign as it was then. */
  const perfZips = new Map<string, { campaign: PerfCampaign; requests: PerfRequestRecord[] }>();

  const api: Api = {
    system: {
      check: async () =>
        ok({
          ...(gpus.length
            ? { backend: 'cuda' as const, backendLabel: `CUDA: ${gpus[0]?.name ?? ''}`, cudaStatus: '' }
            : { backend: 'cpu' as const, backendLabel: 'CPU backend', cudaStatus: 'no CUDA device (cudaGetDeviceCount: error 35)' }),
          gpus,
          cpuLabel: 'Fake CPU (2 threads, AVX2)',
          memoryBytes: 24 * 2 ** 30,
          dataDir,
          hubUrl: 'http://127.0.0.1/fake-hub',
          appVersion: '0.1.0',
          dataDirFreeBytes: opts.freeBytes ?? 52e9,
          assets: [...assets.values()],
          nativeDialogs: opts.pickPaths !== undefined,
        }),
      pickPath: async (req) =>
        opts.pickPaths ? ok({ path: opts.pickPaths[req.title] ?? null }) : err('BAD_INPUT', 'no file dialogs in this fake'),
    },
    models: {
      list: async () => ok(models),
      details: async ({ modelId }) => {
        const m = models.find((x) => x.id === modelId);
        if (!m) return err('NOT_FOUND', `no prepared model ${modelId} in ${dataDir}`);
        const files = [
          { path: 'config.json', bytes: 1_024 },
          { path: 'horizon-manifest.json', bytes: 2_048 },
          { path: 'model-qpacked-00001-of-00001.safetensors', bytes: m.sizeBytes - 3_072 },
        ];
        return ok({
          id: m.id, repo: m.repo, revision: m.revision, revisionAsked: m.revision, weights: m.weights,
          preparedDir: m.dir, dir: `${m.dir}/int4-g32`, files, totalBytes: m.sizeBytes,
          packScheme: m.weights === 'int4' ? { format: 'qpacked-v2', codebook: 'hq4nl', groupSize: 32, bitsPerWeight: 4.5 } : null,
          hubUrl: 'http://127.0.0.1/fake-hub', preparedAt: m.preparedAt, toolVersion: '0.1.0', problems: [],
        });
      },
      delete: async ({ modelId, scope }) => {
        const i = models.findIndex((x) => x.id === modelId);
        const m = models[i];
        if (!m) return err('NOT_FOUND', `no prepared model ${modelId} in ${dataDir}`);
        if (scope === 'variant' && m.weights !== 'int4') return err('BAD_INPUT', `${modelId}: delete the whole model instead`);
        const live = [...runs.values()].find((r) => r.summary.modelId === modelId && isLiveStatus(r.summary.status));
        if (live) return err('BAD_INPUT', `run ${live.summary.id} is using this model; cancel it before deleting the model`);
        models.splice(i, 1);
        return ok({ modelId, deletedDir: m.dir, freedBytes: m.sizeBytes });
      },
      prepare: async (req) => {
        const jobId = `prep-${++jobs}`;
        if (req.repo.startsWith('missing/')) {
          // As the real service reports a repo the Hub does not have: the job fails while resolving it.
          const message = `${req.repo}@${req.revision}: model repo '${req.repo}' not found (HTTP 404)`;
          setTimeout(() => {
            emit('models:onDidProgress', {
              jobId, step: 'resolve', status: 'failed', doneBytes: 0, totalBytes: 0, bytesPerSecond: 0, etaSeconds: null,
              message, error: { code: 'NOT_FOUND', message },
            });
          }, tick);
          return ok({ jobId });
        }
        const steps = ['resolve', 'download', 'verify', 'pack'] as const;
        let s = 0;
        let pct = 0;
        const timer = setInterval(() => {
          const step = steps[s];
          if (!step) return;
          pct += 25;
          emit('models:onDidProgress', {
            jobId,
            step,
            status: 'running',
            file: step === 'download' ? 'model.safetensors' : undefined,
            doneBytes: pct * 10_000,
            totalBytes: 1_000_000,
            bytesPerSecond: 2_500_000,
            etaSeconds: (100 - pct) / 50,
            message: `${step} ${pct}%`,
          });
          if (pct >= 100) {
            pct = 0;
            s++;
          }
          if (s === steps.length) {
            clearInterval(timer);
            prepTimers.delete(jobId);
            const model: PreparedModel = {
              id: `${req.repo.replace('/', '--')}@${req.revision.slice(0, 7)}/int4`,
              repo: req.repo,
              revision: req.revision.padEnd(40, '0').slice(0, 40),
              weights: 'int4',
              dir: `${dataDir}/models/${req.repo.replace('/', '--')}`,
              sizeBytes: 3_400_000,
              preparedAt: new Date().toISOString(),
              ready: true,
            };
            models.push(model);
            emit('models:onDidProgress', {
              jobId,
              step: 'pack',
              status: 'done',
              doneBytes: 1_000_000,
              totalBytes: 1_000_000,
              bytesPerSecond: 0,
              etaSeconds: 0,
              message: 'ready',
              modelId: model.id,
            });
          }
        }, opts.prepTickMs ?? tick);
        prepTimers.set(jobId, { timer, step: () => steps[s] ?? 'pack' });
        return ok({ jobId });
      },
      cancel: async ({ jobId }) => {
        const job = prepTimers.get(jobId);
        if (job) {
          clearInterval(job.timer);
          prepTimers.delete(jobId);
          emit('models:onDidProgress', {
            jobId, step: job.step(), status: 'cancelled', doneBytes: 0, totalBytes: 0, bytesPerSecond: 0, etaSeconds: null,
            message: 'cancelled; preparing again resumes',
          });
        }
        return ok(undefined);
      },
      downloadAssets: async () => err('NETWORK', 'fake: downloads are not available offline; import instead'),
      checkQuality: async ({ modelId, limit }) => {
        const i = models.findIndex((m) => m.id === modelId);
        if (i < 0) return err('NOT_FOUND', `no prepared model ${modelId}`);
        if (models[i]!.weights !== 'int4') return err('BAD_INPUT', `${modelId} is not an INT4 model: the quality check compares INT4 with BF16`);
        const jobId = `quality-${++jobs}`;
        const total = limit ?? 32;
        const progress = (done: number, status: 'running' | 'done') =>
          emit('models:onDidProgress', {
            jobId, step: 'quality', status, doneBytes: done, totalBytes: total, bytesPerSecond: 0, etaSeconds: status === 'running' ? total - done : null,
            message: status === 'done' ? 'quality check done' : `quality check: ${done} of ${total} prompts`, ...(status === 'done' ? { modelId } : {}),
          });
        setTimeout(() => progress(total / 2, 'running'), tick);
        setTimeout(() => {
          models[i] = {
            ...models[i]!,
            quality: {
              format: 'horizon-quality-v1', createdAt: new Date(0).toISOString(), int4Dir: 'int4-g32', backend: 'cpu', limit: total, maxNewTokens: 128,
              prompts: total, positions: total * 128, top1Agreement: 0.95, meanKl: 0.01, p99Kl: 0.2, meanAbsLogitDiff: 0.05,
              promptsWithoutDivergence: total / 2, medianFirstDivergence: 40,
              q4_0: { activations: 'q8_0', top1Agreement: 0.93, meanKl: 0.02, p99Kl: 0.3, meanAbsLogitDiff: 0.07, meanKlRatioCi95: [0.45, 0.56], promptsInt4Closer: total - 3, promptsQ4_0Closer: 3, signTestP: 0.004 }, perPrompt: [],
            },
          };
          progress(total, 'done');
        }, 2 * tick);
        return ok({ jobId });
      },
      importAssets: async (req) => {
        const full = path.resolve(req.path);
        try {
          if (req.kind === 'ifeval') {
            prompts = readFileSync(full, 'utf8')
              .split('\n')
              .filter((l) => l.trim())
              .map((l) => JSON.parse(l) as Prompt);
          } else {
            readFileSync(path.join(full, 'abbrev_types.txt'));
          }
        } catch (e) {
          return err('NOT_FOUND', `import ${req.kind}: ${full}: ${e instanceof Error ? e.message : String(e)}`);
        }
        const status: AssetStatus = {
          kind: req.kind,
          ready: true,
          path: assets.get(req.kind)?.path ?? full,
          detail: req.kind === 'ifeval' ? `${prompts.length} prompts, sha256 ok` : 'Punkt English, sha256 ok',
        };
        assets.set(req.kind, status);
        return ok(status);
      },
    },
    runs: {
      start: async (req) => {
        const model = models.find((m) => m.id === req.modelId);
        if (!model) return err('MODEL_NOT_FOUND', `runs:start: no prepared model '${req.modelId}'`);
        if (prompts.length === 0) return err('NOT_FOUND', 'runs:start: IFEval input data is not imported');
        const id = `run-${++runCount}`;
        const selected = prompts.slice(0, req.limit ?? prompts.length);
        const run: FakeRun = {
          summary: {
            id,
            modelId: model.id,
            modelRepo: model.repo,
            modelRevision: model.revision,
            weights: model.weights,
            status: 'running',
            // As the real service answers: the device is known once the model has loaded, and progress then names it.
            backend: 'pending',
            backendLabel: 'loading the model…',
            createdAt: new Date().toISOString(),
            finishedAt: null,
            done: 0,
            total: selected.length,
            batch: req.batch ?? 8,
            accuracies: null,
            error: null,
            imported: null,
            label: readLabel(req.label ?? '').label,
          },
          responses: [],
          prompts: selected,
          maxNewTokens: req.maxNewTokens ?? 1280,
          batch: req.batch ?? 8,
          timer: null,
          device: {
            backend: gpus.length ? 'cuda' : 'cpu',
            backendLabel: gpus.length ? `CUDA: ${gpus.find((g) => g.index === (req.cudaDevice ?? gpus[0]?.index))?.name ?? '?'}` : 'CPU backend',
            residency: 'host memory, fake engine',
          },
          wallMs: 0,
          sessionStartedAt: Date.now(),
          lastSessionMs: 0,
          sessionTokens: 0,
        };
        runs.set(id, run);
        advance(run);
        return ok(run.summary);
      },
      cancel: async ({ runId }) => {
        const run = runs.get(runId);
        if (!run) return err('NOT_FOUND', `runs:cancel: no run '${runId}'`);
        if (run.timer) clearTimeout(run.timer);
        run.timer = null;
        endSession(run);
        run.summary = { ...run.summary, status: 'cancelled' };
        progress(run);
        return ok(undefined);
      },
      resume: async ({ runId }) => {
        const run = runs.get(runId);
        if (!run) return err('NOT_FOUND', `runs:resume: no run '${runId}'`);
        if (run.summary.imported) {
          return err('BAD_INPUT', `run ${runId} was imported from ${run.summary.imported.file}: it was made on another machine, and its model is not here to resume with`);
        }
        run.summary = { ...run.summary, status: 'running' };
        run.sessionStartedAt = Date.now();
        run.sessionTokens = 0;
        advance(run);
        return ok(run.summary);
      },
      list: async () => ok([...runs.values()].map((r) => r.summary).reverse()),
      get: async ({ runId }) => {
        const run = runs.get(runId);
        return run ? ok(detail(run)) : err('NOT_FOUND', `runs:get: no run '${runId}'`);
      },
      responses: async (q) => {
        const run = runs.get(q.runId);
        if (!run) return err('NOT_FOUND', `runs:responses: no run '${q.runId}'`);
        const text = q.text?.toLowerCase();
        const mode = q.mode ?? 'strict';
        const rows = run.responses.filter((r) => {
          if (q.instructionId && !r.row.instructionIds.includes(q.instructionId)) return false;
          if (q.verdict && verdictOf(r, mode) !== (q.verdict === 'pass')) return false;
          if (text && !`${r.detail.prompt}\n${r.detail.response}`.toLowerCase().includes(text)) return false;
          if (q.finish && r.row.finishReason !== q.finish) return false;
          return true;
        });
        // As the response repository orders: by key as a number, failing before passing, ties by key.
        function verdictOf(r: StoredResponse, m: 'strict' | 'loose'): boolean {
          if (!q.instructionId) return m === 'strict' ? r.row.strictPass : r.row.loosePass;
          return r.detail.verdicts.filter((v) => v.instructionId === q.instructionId).every((v) => v[m]);
        }
        function findingOf(r: StoredResponse, id: string): string | null {
          const mine = r.detail.verdicts.filter((v) => v.instructionId === id);
          return (mine.find((v) => !v.strict) ?? mine[0])?.finding ?? null;
        }
        const rank = (r: StoredResponse): number =>
          q.sortBy === 'instructions' ? r.row.instructionIds.length : q.sortBy === 'strict' || q.sortBy === 'loose' ? Number(verdictOf(r, q.sortBy)) : r.row.key;
        const sign = q.descending ? -1 : 1;
        rows.sort((a, b) => sign * (rank(a) - rank(b) || a.row.key - b.row.key));
        const offset = q.offset ?? 0;
        const items = rows.slice(offset, offset + (q.limit ?? 50)).map((r) =>
          q.instructionId ? { ...r.row, instructionVerdict: { instructionId: q.instructionId, strictPass: verdictOf(r, 'strict'), loosePass: verdictOf(r, 'loose'), finding: findingOf(r, q.instructionId) } } : r.row,
        );
        return ok({ total: rows.length, offset, items });
      },
      performance: async ({ runId }) => {
        const run = runs.get(runId);
        if (!run) return err('NOT_FOUND', `runs:performance: no run '${runId}'`);
        // Deterministic figures a chart can show: a slow first wave, then a steady rate with a dip every 7th.
        return ok({
          runId,
          points: run.responses.map((r, i) => ({
            key: r.row.key,
            finishedAt: new Date(Date.UTC(2026, 11, 4, 10, 0, 0) + i * 1500).toISOString(),
            tokens: r.row.tokens,
            ttftMs: 30 + (i % 5) * 12 + (i < 3 ? 200 : 0),
            decodeTokensPerSecond: i < 3 ? 60 + i * 10 : i % 7 === 0 ? 90 : 118 + (i % 3),
          })),
        });
      },
      response: async ({ runId, key }) => {
        const found = runs.get(runId)?.responses.find((r) => r.row.key === key);
        return found ? ok(found.detail) : err('NOT_FOUND', `runs:response: no response ${key} in run '${runId}'`);
      },
      compare: async ({ runA, runB }) => {
        const a = runs.get(runA);
        const b = runs.get(runB);
        if (!a || !b) return err('NOT_FOUND', `runs:compare: no run '${a ? runB : runA}'`);
        // The real services' comparison, over the fake runs' responses as the database would return them.
        const stored = (run: FakeRun): StoredResponseWithPass[] =>
          run.responses.map(({ detail: d }, position) => ({ ...d, position, finishReason: d.finishReason as FinishReason }));
        const { changed, stats } = compareResponses(stored(a), stored(b));
        return ok({ a: detail(a), b: detail(b), changed, common: stats.common, stats });
      },
      delete: async ({ runId, deleteExport }) => {
        const run = runs.get(runId);
        if (!run) return err('NOT_FOUND', `run ${runId} not found`);
        if (isLiveStatus(run.summary.status)) {
          return err('BAD_INPUT', `run ${runId} is ${run.summary.status}: cancel it before deleting it`);
        }
        runs.delete(runId);
        emit('runs:onDidDelete', { runId });
        const deletedFiles = deleteExport ? runZips(runId).map((f) => f.path) : [];
        for (const f of deletedFiles) zips.delete(f);
        return ok({ runId, responses: run.responses.length, deletedFiles, fileErrors: [] });
      },
      setLabel: async ({ runId, label: text }) => {
        const run = runs.get(runId);
        if (!run) return err('NOT_FOUND', `run ${runId} not found`);
        // The real rule, so the page's own check and the service's answer can be seen to agree.
        const { label, problem } = readLabel(text);
        if (problem) return err('BAD_INPUT', problem);
        run.summary = { ...run.summary, label };
        emit('runs:onDidLabel', { runId, label });
        return ok(run.summary);
      },
    },
    export: {
      exportRun: async ({ runId, path: out }) => {
        const run = runs.get(runId);
        if (!run) return err('NOT_FOUND', `export: no run '${runId}'`);
        if (run.summary.status === 'running') return err('BAD_INPUT', `run ${runId} is still running: export it once it has finished or been cancelled`);
        const zip = out ?? defaultZip(runId);
        // A ZIP keeps the run as it was exported, whatever the run does afterwards (a resume).
        zips.set(zip, {
          status: run.summary.status, responses: [...run.responses], total: run.summary.total,
          run: { ...run, summary: { ...run.summary }, responses: [...run.responses], timer: null },
        });
        return ok({ path: zip, bytes: 12_345, sha256: 'f'.repeat(64) });
      },
      verify: async ({ path: zip }) => {
        const c = perfZips.get(zip)?.campaign;
        if (c) {
          const backendLabel = c.backend === 'cpu' ? 'CPU backend' : `CUDA: ${c.deviceLabel}`;
          return ok({ kind: 'campaign', verified: true, problems: [], unchecked: [], accuracies: null, subject: subjectOf({ ...c, backendLabel }, c.model.modelId) });
        }
        const held = zips.get(zip);
        if (!held) return ok({ kind: 'result', verified: false, problems: [`${zip}: not a result ZIP`], unchecked: [], accuracies: null });
        const r = held.run.summary;
        return ok({
          subject: subjectOf({ ...r, model: { repo: r.modelRepo, revision: r.modelRevision, weights: r.weights } }, r.modelId),
          kind: 'result',
          verified: true,
          problems: [],
          // What the real verifier says when the official prompts are not at hand to compare a partial run's rows.
          unchecked: held.status === 'completed' ? [] : ['input_data.jsonl: its rows were not compared with the official IFEval set'],
          accuracies: accuracies(held.responses),
          run: { status: held.status, responses: held.responses.length, total: held.total },
          cut: { cut: held.responses.filter((x) => x.row.finishReason === 'length').length, of: held.responses.length, maxNewTokens: held.run.maxNewTokens },
        });
      },
      listZips: async ({ runId }) => ok(runZips(runId)),
      importRun: async ({ path: zip }) => {
        const held = zips.get(zip);
        if (!held) return err('BAD_INPUT', `${zip}: does not verify, so it is not imported (1 problem; the first: ${zip}: not a result ZIP)`);
        const id = held.run.summary.id;
        const stored = runs.get(id);
        if (stored) {
          return err(
            'BAD_INPUT',
            stored.summary.imported
              ? `${zip}: run ${id} is stored already, imported from ${stored.summary.imported.file} at ${stored.summary.imported.importedAt}`
              : `${zip}: run ${id} is stored already: it was made on this machine`,
          );
        }
        const summary = { ...held.run.summary, imported: { file: zip, sha256: 'f'.repeat(64), importedAt: new Date().toISOString() } };
        runs.set(id, { ...held.run, summary, responses: [...held.run.responses] });
        emit('runs:onDidImport', { runId: id });
        return ok({ run: summary, unchecked: held.status === 'completed' ? [] : ['input_data.jsonl: its rows were not compared with the official IFEval set'] });
      },
    },
    perf: {
      start: async ({ modelId, budgetsGiB, label: labelText }) => {
        const model = models.find((m) => m.id === modelId);
        if (!model) return err('MODEL_NOT_FOUND', `model ${modelId} is not prepared in ${dataDir}`);
        if (activeCampaign) return err('BAD_INPUT', `campaign ${activeCampaign} is still running; cancel it first`);
        const live = [...runs.values()].find((r) => isLiveStatus(r.summary.status));
        if (live) return err('BAD_INPUT', `run ${live.summary.id} is generating; a campaign measures alone (wait for it or cancel it)`);
        const id = `perf-${++campaignCount}`;
        const specs = campaignConfigs(gpus.length ? (budgetsGiB ?? []).map((g) => g * 2 ** 30) : []);
        const settings = { ...PERF_SETTINGS, keys: prompts.slice(0, PERF_SETTINGS.prompts).map((p) => p.key) };
        const campaign: PerfCampaign = {
          id, createdAt: new Date().toISOString(), finishedAt: null, status: 'running', error: null,
          model: { modelId, repo: model.repo, revision: model.revision, weights: model.weights, manifestSha256: 'b'.repeat(64) },
          backend: gpus.length ? 'cuda' : 'cpu', deviceLabel: gpus.length ? `CUDA: ${gpus[0]?.name ?? ''}` : 'CPU',
          peakMemoryScope: gpus.length ? 'process' : null, settings,
          configs: specs.map((c) => ({ ...c, residency: c.expertBudgetBytes === null ? 'all 64 experts a layer' : `${Math.floor(c.expertBudgetBytes / 2 ** 27)} of 64 experts a layer` })),
          imported: null,
          label: readLabel(labelText ?? '').label,
        };
        const requests: PerfRequestRecord[] = [];
        campaigns.set(id, { campaign, requests });
        activeCampaign = id;
        const total = specs.length * PERF_SETTINGS.blocks * PERF_SETTINGS.prompts;
        const step = () => {
          const c = campaigns.get(id)!;
          if (c.campaign.status !== 'running') return;
          const n = requests.length;
          const config = Math.floor(n / (PERF_SETTINGS.blocks * PERF_SETTINGS.prompts));
          const within = n % (PERF_SETTINGS.blocks * PERF_SETTINGS.prompts);
          // Deterministic figures: smaller budgets decode slower and copy more.
          const budget = specs[config]?.expertBudgetBytes;
          const slow = budget == null ? 1 : 1 + 8 / (budget / 2 ** 30);
          requests.push({
            config, block: Math.floor(within / PERF_SETTINGS.prompts), key: settings.keys[within % PERF_SETTINGS.prompts]!,
            promptTokens: 60 + within, tokens: PERF_SETTINGS.maxNewTokens, ttftMs: 20 * slow + (within % 3), decodeTokensPerSecond: 500 / slow - (within % 4),
            responseMs: 300 * slow, peakMemoryBytes: gpus.length ? (budget ?? 7 * 2 ** 30) + 2 ** 30 : 0,
            h2dBytes: budget == null ? 0 : 40_000_000 * slow, expertHits: gpus.length ? 1000 : 0, expertMisses: budget == null ? 0 : Math.round(100 * slow), expertEvictions: budget == null ? 0 : Math.round(90 * slow),
          });
          const done = requests.length === total;
          if (done) {
            c.campaign = { ...c.campaign, status: 'completed', finishedAt: new Date().toISOString() };
            activeCampaign = null;
          }
          emit('perf:onDidProgress', { campaignId: id, status: c.campaign.status, config, configs: specs.length, done: requests.length, total, message: `${specs[config]?.label}: ${within + 1} of ${PERF_SETTINGS.blocks * PERF_SETTINGS.prompts}` });
          if (!done) setTimeout(step, Math.max(1, tick / 4));
        };
        setTimeout(step, tick);
        return ok(campaign);
      },
      cancel: async ({ campaignId }) => {
        const c = campaigns.get(campaignId);
        if (!c || c.campaign.status !== 'running') return err('NOT_FOUND', `campaign ${campaignId} is not running`);
        c.campaign = { ...c.campaign, status: 'cancelled', finishedAt: new Date().toISOString() };
        activeCampaign = null;
        emit('perf:onDidProgress', { campaignId, status: 'cancelled', config: 0, configs: c.campaign.configs.length, done: c.requests.length, total: 0, message: 'cancelled' });
        return ok(undefined);
      },
      list: async () => ok([...campaigns.values()].map((c) => c.campaign).reverse()),
      get: async ({ campaignId }) => {
        const c = campaigns.get(campaignId);
        if (!c) return err('NOT_FOUND', `campaign ${campaignId} not found`);
        return ok({ ...c.campaign, requests: [...c.requests], aggregates: aggregateCampaign(c.campaign.configs.length, c.requests, c.campaign.backend === 'cpu') });
      },
      exportZip: async ({ campaignId }) => {
        const c = campaigns.get(campaignId);
        if (!c) return err('NOT_FOUND', `campaign ${campaignId} not found`);
        if (c.campaign.status === 'running') return err('BAD_INPUT', `campaign ${campaignId} is still running: export it once it has ended`);
        const zip = defaultZip(campaignId);
        perfZips.set(zip, { campaign: { ...c.campaign }, requests: [...c.requests] });
        return ok({ path: zip, bytes: 4_321, sha256: 'e'.repeat(64) });
      },
      importZip: async ({ path: zip }) => {
        const held = perfZips.get(zip);
        if (!held) return err('BAD_INPUT', `${zip}: is not a performance campaign ZIP`);
        const stored = campaigns.get(held.campaign.id);
        if (stored) {
          return err(
            'BAD_INPUT',
            stored.campaign.imported
              ? `${zip}: campaign ${held.campaign.id} is stored already, imported from ${stored.campaign.imported.file} at ${stored.campaign.imported.importedAt}`
              : `${zip}: campaign ${held.campaign.id} is stored already: it was measured on this machine`,
          );
        }
        const campaign = { ...held.campaign, imported: { file: zip, sha256: 'e'.repeat(64), importedAt: new Date().toISOString() } };
        campaigns.set(campaign.id, { campaign, requests: [...held.requests] });
        emit('perf:onDidImport', { campaignId: campaign.id });
        return ok(campaign);
      },
      listZips: async ({ campaignId }) => ok(campaignZips(campaignId)),
      setLabel: async ({ campaignId, label: text }) => {
        const c = campaigns.get(campaignId);
        if (!c) return err('NOT_FOUND', `campaign ${campaignId} not found`);
        const { label, problem } = readLabel(text);
        if (problem) return err('BAD_INPUT', problem);
        c.campaign = { ...c.campaign, label };
        emit('perf:onDidLabel', { campaignId, label });
        return ok(c.campaign);
      },
      delete: async ({ campaignId, deleteExport }) => {
        const c = campaigns.get(campaignId);
        if (!c) return err('NOT_FOUND', `campaign ${campaignId} not found`);
        if (c.campaign.status === 'running') return err('BAD_INPUT', `campaign ${campaignId} is running: cancel it before deleting it`);
        campaigns.delete(campaignId);
        emit('perf:onDidDelete', { campaignId });
        const deletedFiles = deleteExport ? campaignZips(campaignId).map((f) => f.path) : [];
        for (const f of deletedFiles) perfZips.delete(f);
        return ok({ campaignId, requests: c.requests.length, deletedFiles, fileErrors: [] });
      },
    },
  };

  function defaultZip(id: string): string {
    return `${dataDir}/exports/${id}.zip`;
  }

  /** The campaign's ZIP in exports/, as the real service finds it by name. */
  function campaignZips(campaignId: string): ExportFile[] {
    const zip = defaultZip(campaignId);
    return perfZips.has(zip) ? [{ path: zip, name: `${campaignId}.zip`, bytes: 4_321 }] : [];
  }

  /** The run's ZIP in exports/, as the real service finds it by name. */
  function runZips(runId: string): ExportFile[] {
    const zip = defaultZip(runId);
    return zips.has(zip) ? [{ path: zip, name: `${runId}.zip`, bytes: 12_345 }] : [];
  }

  /** Milliseconds this session has generated for so far. */
  function sessionMs(run: FakeRun): number {
    return run.sessionStartedAt === null ? 0 : Date.now() - run.sessionStartedAt;
  }

  function endSession(run: FakeRun): void {
    run.lastSessionMs = sessionMs(run);
    run.wallMs += run.lastSessionMs;
    run.sessionStartedAt = null;
  }

  function detail(run: FakeRun): RunDetail {
    const table = new Map<string, { count: number; strictPassed: number; loosePassed: number }>();
    for (const r of run.responses) {
      for (const v of r.detail.verdicts) {
        const t = table.get(v.instructionId) ?? { count: 0, strictPassed: 0, loosePassed: 0 };
        t.count++;
        if (v.strict) t.strictPassed++;
        if (v.loose) t.loosePassed++;
        table.set(v.instructionId, t);
      }
    }
    const byInstruction: InstructionTypeRow[] = [...table.entries()]
      .map(([instructionId, t]) => ({ instructionId, ...t }))
      .sort((x, y) => x.instructionId.localeCompare(y.instructionId));
    const tokens = run.responses.reduce((s, r) => s + r.row.tokens, 0);
    const wall = (run.wallMs + sessionMs(run)) / 1000;
    return {
      ...run.summary,
      residency: run.summary.backendLabel === 'loading the model…' ? 'pending' : run.device.residency,
      policy: { maxNewTokens: run.maxNewTokens, batch: run.batch, greedy: true, total: run.prompts.length, expertBudgetBytes: null, cudaDevice: null },
      endings: {
        stop: run.responses.filter((r) => r.row.finishReason === 'stop').length,
        length: run.responses.filter((r) => r.row.finishReason === 'length').length,
        cancelled: 0,
      },
      carriedQuality: null,
      intervals: accuracyIntervals(
        run.responses.map((r) => ({
          count: r.detail.verdicts.length,
          strict: r.detail.verdicts.filter((v) => v.strict).length,
          loose: r.detail.verdicts.filter((v) => v.loose).length,
        })),
      ),
      byInstruction,
      figures: {
        ttftMs: 42,
        decodeTokensPerSecond: 118.5,
        // A "CUDA" run reports what a Windows driver allows: the whole GPU's used memory.
        peakMemoryBytes: gpus.length ? 7.5 * 2 ** 30 : null,
        peakMemoryScope: gpus.length ? 'device' : null,
        expertCache: gpus.length ? { hits: 48_000, misses: 0, evictions: 0 } : null,
        h2dBytes: gpus.length ? 0 : null,
        generatedTokens: tokens,
        wallSeconds: wall,
      },
    };
  }

  function progress(run: FakeRun, partial?: { key: number; text: string }): void {
    // The model "loads" at once: every event names the device, and the run's summary does from then on.
    run.summary = { ...run.summary, backend: run.device.backend, backendLabel: run.device.backendLabel };
    const session = (run.sessionStartedAt === null ? run.lastSessionMs : sessionMs(run)) / 1000;
    const elapsed = (run.wallMs + sessionMs(run)) / 1000;
    const left = run.summary.total - run.summary.done;
    emit('runs:onDidProgress', {
      runId: run.summary.id,
      status: run.summary.status,
      done: run.summary.done,
      total: run.summary.total,
      tokensPerSecond: run.sessionTokens > 0 && session > 0 ? run.sessionTokens / session : null,
      etaSeconds: run.summary.done ? (elapsed / run.summary.done) * left : null,
      elapsedSeconds: elapsed,
      ...run.device,
      ...(partial ? { partial } : { accuracies: accuracies(run.responses) }),
    });
  }

  function advance(run: FakeRun): void {
    run.timer = setTimeout(() => {
      const p = run.prompts[run.summary.done];
      if (!p || run.summary.status !== 'running') return;
      const other = otherSettings(run.maxNewTokens);
      const text = `Fake response ${p.key}. This text stands in for the model's ${other ? `answer in at most ${run.maxNewTokens} tokens` : 'answer'} to: ${p.prompt.slice(0, 80)}`;
      progress(run, { key: p.key, text: text.slice(0, 30) });
      const verdicts = p.instruction_id_list.map((instructionId, i) => {
        const strict = verdict(p.key, i, false) !== (other && i === 0 && p.key % 2 === 0);
        const loose = strict || verdict(p.key, i, true);
        return {
          instructionId,
          kwargs: p.kwargs[i] ?? {},
          strict,
          loose,
          // Some prompts' findings are missing, as for a run whose eval assets are gone.
          finding: p.key % 4 === 1 ? null : `fake finding ${i + 1}: ${strict ? 'followed' : 'not followed'}`,
          looseFinding: loose && !strict ? { variant: 'without its first line', detail: `fake finding ${i + 1}: followed` } : null,
        };
      });
      const strictPass = verdicts.every((v) => v.strict);
      const loosePass = verdicts.every((v) => v.loose);
      // Every fifth prompt ends on the model's end token; the others are cut at the run's max new tokens.
      const finishReason = p.key % 5 === 0 ? ('stop' as const) : ('length' as const);
      const row: ResponseRow = {
        key: p.key,
        promptPreview: p.prompt.slice(0, 200),
        responsePreview: text.slice(0, 200),
        instructionIds: p.instruction_id_list,
        strictPass,
        loosePass,
        tokens: 24,
        finishReason,
      };
      const stored: StoredResponse = {
        row,
        detail: {
          runId: run.summary.id,
          key: p.key,
          prompt: p.prompt,
          response: text,
          tokens: 24,
          finishReason,
          ttftMs: 40,
          decodeTokensPerSecond: 120,
          strictPass,
          loosePass,
          verdicts,
        },
      };
      run.responses.push(stored);
      run.sessionTokens += row.tokens;
      const done = run.summary.done + 1;
      const finished = done >= run.summary.total;
      if (finished) endSession(run);
      run.summary = {
        ...run.summary,
        done,
        accuracies: accuracies(run.responses),
        status: finished ? 'completed' : 'running',
        finishedAt: finished ? new Date().toISOString() : null,
      };
      emit('runs:onDidResponse', { runId: run.summary.id, row });
      progress(run);
      if (!finished) advance(run);
    }, tick);
  }

  return {
    api,
    setEmit: (e) => {
      emit = e;
    },
  };
}
