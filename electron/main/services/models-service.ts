import { randomUUID } from 'node:crypto';

import type {
  AssetStatus,
  DeletedModel,
  DeleteModelRequest,
  DownloadAssetsRequest,
  EmitEvent,
  ImportAssetRequest,
  JobHandle,
  ModelDetails,
  ModelRef,
  ModelsApi,
  PrepareProgress,
  PrepareRequest,
  PreparedModel,
  PrepareStep,
  QualityCheckRequest,
} from '../../common/ipc-contract.js';
import type { Result } from '../../common/result.js';
import { err, ok } from '../../common/result.js';
import {
  downloadIfevalData,
  downloadPunkt,
  evalAssetsStatus,
  importIfevalData,
  importPunkt,
} from '../prep/eval-assets.js';
import { listPreparedModels } from '../prep/list-prepared-models.js';
import { deletePack, deletePreparedModel, folderBytes, listFiles, packScheme } from '../prep/model-folders.js';
import { readPreparedManifest, verifyPreparedFiles } from '../prep/prepared-manifest.js';
import { prepareModel } from '../prep/prepare-model.js';
import type { PackerLauncher } from '../prep/pack-model.js';
import type { PrepEvent } from '../prep/prep-events.js';
import { runQualityJob } from '../prep/quality-job.js';
import { readPackQuality } from '../prep/quality-report.js';
import { appErrorCode, ServiceError, toResult } from './service-result.js';

export interface ModelsServiceOptions {
  readonly dataDir: string;
  readonly hubUrl: string;
  readonly emit: EmitEvent;
  /** How preparation starts the INT4 packer (Electron: a utilityProcess); a Node child process by default. */
  readonly packer?: PackerLauncher;
  /** Replaces prepareModel (tests). */
  readonly prepare?: typeof prepareModel;
  /**
   * Before a model's files are deleted: throws (a ServiceError) while a live run uses the prepared folder, and makes
   * the runtime worker let go of whatever model it holds.
   */
  readonly beforeDelete?: (preparedDir: string) => Promise<void>;
}

/** A runnable model variant: what a run needs to load it. */
export interface ModelVariant extends PreparedModel {
  /** The prepared folder (holds prepared.json). */
  readonly preparedDir: string;
}

/** A listing shows a size even for a folder it cannot read (its problems say why). */
const sizeOf = (dir: string): Promise<number> => folderBytes(dir).catch(() => 0);

/** Lists every runnable variant (int4 when packed, bf16 always) of the prepared models under `dataDir`. */
export async function listModelVariants(dataDir: string): Promise<ModelVariant[]> {
  const out: ModelVariant[] = [];
  for (const m of await listPreparedModels(dataDir)) {
    const short = m.commit.slice(0, 7);
    const base = `${m.repo.split('/').join('--')}@${short}`;
    const common = {
      repo: m.repo,
      revision: m.commit,
      preparedAt: m.manifest?.createdAt ?? '',
      ready: m.ready,
      preparedDir: m.modelDir,
    };
    if (m.packedDir) {
      const quality = await readPackQuality(m.modelDir, m.packedDir);
      out.push({ ...common, id: `${base}/int4-g${m.groupSize ?? 0}`, weights: 'int4', dir: m.packedDir, sizeBytes: await sizeOf(m.packedDir), quality });
    }
    out.push({ ...common, id: `${base}/bf16`, weights: 'bf16', dir: m.sourceDir, sizeBytes: await sizeOf(m.sourceDir) });
  }
  return out;
}

/** The variant a run or campaign asks for by id: prepared under `dataDir` and ready, else a ServiceError saying which. */
export async function readyVariant(dataDir: string, modelId: string): Promise<ModelVariant> {
  const variant = (await listModelVariants(dataDir)).find((v) => v.id === modelId);
  if (!variant) throw new ServiceError('MODEL_NOT_FOUND', `model ${modelId} is not prepared in ${dataDir}`);
  if (!variant.ready) throw new ServiceError('MODEL_INVALID', `model ${modelId} is not ready (prepare it again)`);
  return variant;
}

function stepOf(phase: string): PrepareStep {
  switch (phase) {
    case 'download':
    case 'verify':
    case 'pack':
      return phase;
    case 'hash':
      return 'pack';
    case 'resolve':
      return 'resolve';
    default:
      return 'verify';
  }
}

/** Prepared models, preparation jobs and the eval assets. */
export class ModelsService implements ModelsApi {
  private readonly jobs = new Map<string, AbortController>();

  constructor(private readonly opts: ModelsServiceOptions) {}

  list(): Promise<Result<readonly PreparedModel[]>> {
    return toResult(async () => (await listModelVariants(this.opts.dataDir)).map(({ preparedDir: _d, ...m }) => m));
  }

  private async variant(modelId: string): Promise<ModelVariant> {
    const v = (await listModelVariants(this.opts.dataDir)).find((m) => m.id === modelId);
    if (!v) throw new ServiceError('NOT_FOUND', `no prepared model ${modelId} in ${this.opts.dataDir}`);
    return v;
  }

  details(req: ModelRef): Promise<Result<ModelDetails>> {
    return toResult(async () => {
      const v = await this.variant(req.modelId);
      const manifest = await readPreparedManifest(v.preparedDir);
      const files = await listFiles(v.dir);
      const problems = await verifyPreparedFiles(v.preparedDir, manifest);
      return {
        id: v.id,
        repo: v.repo,
        revision: v.revision,
        revisionAsked: manifest.revision,
        weights: v.weights,
        preparedDir: v.preparedDir,
        dir: v.dir,
        files,
        totalBytes: files.reduce((n, f) => n + f.bytes, 0),
        packScheme: v.weights === 'int4' ? await packScheme(v.dir).catch(() => null) : null,
        hubUrl: manifest.hubUrl,
        preparedAt: manifest.createdAt,
        toolVersion: manifest.toolVersion,
        problems,
      };
    });
  }

  delete(req: DeleteModelRequest): Promise<Result<DeletedModel>> {
    return toResult(async () => {
      const v = await this.variant(req.modelId);
      if (req.scope === 'variant' && v.weights !== 'int4') {
        throw new ServiceError('BAD_INPUT', `${v.id}: the BF16 checkpoint is what every variant is read from; delete the whole model instead`);
      }
      const busy = [...this.jobs.keys()].find((id) => id.startsWith('prep-') || id.startsWith('quality-'));
      if (busy) throw new ServiceError('BAD_INPUT', `a ${busy.startsWith('prep-') ? 'preparation' : 'quality check'} is running; delete once it has ended`);
      await this.opts.beforeDelete?.(v.preparedDir);
      const done = req.scope === 'variant' ? await deletePack(v.preparedDir) : await deletePreparedModel(v.preparedDir);
      return { modelId: v.id, ...done };
    });
  }

  private progress(p: Omit<PrepareProgress, 'doneBytes' | 'totalBytes' | 'bytesPerSecond' | 'etaSeconds'> & Partial<PrepareProgress>): void {
    this.opts.emit('models:onDidProgress', { doneBytes: 0, totalBytes: 0, bytesPerSecond: 0, etaSeconds: null, ...p });
  }

  async prepare(req: PrepareRequest): Promise<Result<JobHandle>> {
    const jobId = `prep-${randomUUID()}`;
    const controller = new AbortController();
    this.jobs.set(jobId, controller);
    let step: PrepareStep = 'resolve';
    const onEvent = (e: PrepEvent): void => {
      switch (e.type) {
        case 'phase':
          step = e.phase === 'manifest' ? 'verify' : stepOf(e.phase);
          this.progress({ jobId, step, status: 'running', message: e.message });
          return;
        case 'progress': {
          step = stepOf(e.phase);
          const file = e.files ? e.files.join(', ') : e.file;
          this.progress({
            jobId,
            step,
            status: 'running',
            ...(file ? { file } : {}),
            doneBytes: e.doneBytes,
            totalBytes: e.totalBytes,
            bytesPerSecond: e.bytesPerSec,
            etaSeconds: e.etaSec,
            message: `${e.phase}${file ? ` ${file}` : ''}`,
          });
          return;
        }
        case 'retry':
          this.progress({ jobId, step, status: 'running', file: e.file, message: `retrying ${e.file} (attempt ${e.attempt}): ${e.reason}` });
          return;
        case 'warning':
          this.progress({ jobId, step, status: 'running', message: e.message });
          return;
        default:
          return;
      }
    };
    const prepare = this.opts.prepare ?? prepareModel;
    void prepare({
      repo: req.repo,
      revision: req.revision,
      dataDir: this.opts.dataDir,
      hubUrl: this.opts.hubUrl,
      ...(req.token ? { token: req.token } : {}),
      pack: req.pack ?? true,
      signal: controller.signal,
      onEvent,
      ...(this.opts.packer ? { packer: this.opts.packer } : {}),
    }).then(
      async (r) => {
        // The model is prepared whatever the listing says; a listing that fails only leaves the id out.
        const variants = await listModelVariants(this.opts.dataDir).catch(() => []);
        const mine = variants.find((v) => v.preparedDir === r.modelDir && v.weights === (r.packedDir ? 'int4' : 'bf16'));
        this.progress({ jobId, step, status: 'done', message: `prepared ${r.modelDir}`, ...(mine ? { modelId: mine.id } : {}) });
      },
      (e: unknown) => {
        const cancelled = controller.signal.aborted;
        const code = appErrorCode(e, 'INTERNAL');
        const message = e instanceof Error ? e.message : String(e);
        this.progress({
          jobId,
          step,
          status: cancelled ? 'cancelled' : 'failed',
          message: cancelled ? 'cancelled; preparing again resumes' : message,
          ...(cancelled ? {} : { error: { code, message } }),
        });
      },
    ).finally(() => this.jobs.delete(jobId));
    return ok({ jobId });
  }

  async cancel(req: JobHandle): Promise<Result<void>> {
    const job = this.jobs.get(req.jobId);
    if (!job) return err('NOT_FOUND', `no running preparation job ${req.jobId}`);
    job.abort();
    return ok(undefined);
  }

  async downloadAssets(req: DownloadAssetsRequest): Promise<Result<JobHandle>> {
    const running = [...this.jobs.keys()].find((id) => id.startsWith('assets-'));
    if (running) return err('BAD_INPUT', `the eval assets are already being downloaded (job ${running})`);
    const jobId = `assets-${randomUUID()}`;
    const controller = new AbortController();
    this.jobs.set(jobId, controller);
    const kinds = req.kinds ?? ['ifeval', 'punkt'];
    void (async () => {
      const status = await evalAssetsStatus(this.opts.dataDir);
      const onBytes = (doneBytes: number, totalBytes: number) =>
        this.progress({ jobId, step: 'assets', status: 'running', doneBytes, totalBytes, message: 'downloading eval assets' });
      if (kinds.includes('ifeval') && !status.ifeval.ready) await downloadIfevalData({ dataDir: this.opts.dataDir, signal: controller.signal, onBytes });
      if (kinds.includes('punkt') && !status.punkt.ready) await downloadPunkt({ dataDir: this.opts.dataDir, signal: controller.signal, onBytes });
    })().then(
      () => this.progress({ jobId, step: 'assets', status: 'done', message: 'eval assets ready' }),
      (e: unknown) => {
        const message = e instanceof Error ? e.message : String(e);
        const code = appErrorCode(e, 'NETWORK');
        this.progress({
          jobId,
          step: 'assets',
          status: controller.signal.aborted ? 'cancelled' : 'failed',
          message,
          ...(controller.signal.aborted ? {} : { error: { code, message } }),
        });
      },
    ).finally(() => this.jobs.delete(jobId));
    return ok({ jobId });
  }

  importAssets(req: ImportAssetRequest): Promise<Result<AssetStatus>> {
    return toResult(async () => {
      if (req.kind === 'ifeval') await importIfevalData(this.opts.dataDir, req.path);
      else await importPunkt(this.opts.dataDir, req.path);
      const s = await evalAssetsStatus(this.opts.dataDir);
      return req.kind === 'ifeval'
        ? { kind: 'ifeval', ready: s.ifeval.ready, path: s.ifeval.path, detail: '541 prompts, sha256 ok' }
        : { kind: 'punkt', ready: s.punkt.ready, path: s.punkt.dir, detail: 'Punkt English parameters, sha256 ok' };
    });
  }

  async checkQuality(req: QualityCheckRequest): Promise<Result<JobHandle>> {
    const model = (await listModelVariants(this.opts.dataDir)).find((v) => v.id === req.modelId);
    if (!model) return err('NOT_FOUND', `no prepared model ${req.modelId}`);
    if (model.weights !== 'int4') return err('BAD_INPUT', `${req.modelId} is not an INT4 model: the quality check compares INT4 with BF16`);
    // Every prepared model lists its BF16 source beside its INT4 pack, with the one readiness of its prepared.json.
    if (!model.ready) {
      return err('BAD_INPUT', `${req.modelId}: both its INT4 pack and its BF16 source must be prepared and complete`);
    }
    const running = [...this.jobs.keys()].find((id) => id.startsWith('quality-'));
    if (running) return err('BAD_INPUT', `a quality check is already running (job ${running})`);
    const jobId = `quality-${randomUUID()}`;
    const controller = new AbortController();
    this.jobs.set(jobId, controller);
    const limit = req.limit ?? 32;
    const message = (done: number, total: number) => `quality check: ${done} of ${total} prompts`;
    this.progress({ jobId, step: 'quality', status: 'running', doneBytes: 0, totalBytes: limit, message: message(0, limit) });
    void runQualityJob({
      modelDir: model.preparedDir,
      dataDir: this.opts.dataDir,
      limit,
      ...(this.opts.packer ? { launcher: this.opts.packer } : {}),
      signal: controller.signal,
      onProgress: (p) =>
        this.progress({ jobId, step: 'quality', status: 'running', doneBytes: p.done, totalBytes: p.total, etaSeconds: p.etaSeconds, message: message(p.done, p.total) }),
    })
      .then(
        () => this.progress({ jobId, step: 'quality', status: 'done', doneBytes: limit, totalBytes: limit, modelId: model.id, message: 'quality check done' }),
        (e: unknown) => {
          const text = e instanceof Error ? e.message : String(e);
          const aborted = controller.signal.aborted;
          this.progress({
            jobId,
            step: 'quality',
            status: aborted ? 'cancelled' : 'failed',
            message: text,
            ...(aborted ? {} : { error: { code: appErrorCode(e, 'INTERNAL'), message: text } }),
          });
        },
      )
      .finally(() => this.jobs.delete(jobId));
    return ok({ jobId });
  }
}
