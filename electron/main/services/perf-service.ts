import path from 'node:path';

import type Database from 'better-sqlite3';

import type {
  DeleteCampaignRequest,
  DeletedCampaign,
  EmitEvent,
  ExportedZip,
  ExportFile,
  PerfApi,
  PerfRef,
  SetCampaignLabelRequest,
  StartPerfRequest,
  VerifyRequest,
} from '../../common/ipc-contract.js';
import { CAMPAIGN_ID_PREFIX, type PerfCampaign, type PerfCampaignDetail } from '../../common/perf-campaign.js';
import { err, ok, type Result } from '../../common/result.js';
import { readLabel } from '../../common/label.js';
import { dataLayout } from '../data-dir.js';
import type { PerfRepo } from '../db/perf-repo.js';
import { deleteExportFiles, exportFiles } from '../export/export-files.js';
import { importPerfZip } from '../export/import-perf-zip.js';
import { writePerfZip } from '../export/perf-zip.js';
import type { EvalInputs } from '../jobs/eval-inputs.js';
import { newRunId, type RuntimeClient } from '../jobs/eval-run.js';
import { resolveModelSource } from '../jobs/model-source.js';
import { runPerfCampaign } from '../jobs/perf-campaign.js';
import { readyVariant } from './models-service.js';
import { refusingImport, ServiceError, toResult } from './service-result.js';

export interface PerfServiceOptions {
  readonly perf: PerfRepo;
  /** The connection `perf` uses (an import stores its campaign in one transaction on it). */
  readonly db: Database.Database;
  readonly runtime: RuntimeClient;
  readonly dataDir: string;
  readonly appVersion: string;
  readonly emit: EmitEvent;
  readonly inputs: () => Promise<EvalInputs>;
  /** Why the runtime is not free for a campaign (a run generating), or null. */
  readonly busy: () => string | null;
}

/** One campaign at a time, through the same runtime worker as runs. */
export class PerfService implements PerfApi {
  private active: { campaignId: string; controller: AbortController; done: Promise<PerfCampaignDetail> } | undefined;
  private starting = false;

  constructor(private readonly opts: PerfServiceOptions) {}

  /** The campaign in progress, if any (runs wait for it; tests and shutdown await it). */
  get activeCampaign(): { campaignId: string; done: Promise<PerfCampaignDetail> } | undefined {
    return this.active;
  }

  start(req: StartPerfRequest): Promise<Result<PerfCampaign>> {
    return toResult(async () => {
      const { label, problem } = readLabel(req.label ?? '');
      if (problem) throw new ServiceError('BAD_INPUT', problem);
      if (this.active) throw new ServiceError('BAD_INPUT', `campaign ${this.active.campaignId} is still running; cancel it first`);
      if (this.starting) throw new ServiceError('BAD_INPUT', 'another campaign is being started; wait for it');
      const busy = this.opts.busy();
      if (busy) throw new ServiceError('BAD_INPUT', busy);
      this.starting = true;
      try {
        const variant = await readyVariant(this.opts.dataDir, req.modelId);
        const source = await resolveModelSource(variant.preparedDir, variant.weights);
        const inputs = await this.opts.inputs();
        const campaignId = `${CAMPAIGN_ID_PREFIX}${newRunId()}`;
        const controller = new AbortController();
        const done = runPerfCampaign(
          { perf: this.opts.perf, runtime: this.opts.runtime, records: inputs.records },
          {
            id: campaignId,
            source,
            budgetsBytes: (req.budgetsGiB ?? []).map((g) => Math.round(g * 2 ** 30)),
            backend: 'auto',
            ...(label !== null ? { label } : {}),
          },
          { signal: controller.signal, onProgress: (p) => this.opts.emit('perf:onDidProgress', p) },
        );
        this.active = { campaignId, controller, done };
        void done.finally(() => {
          if (this.active?.campaignId === campaignId) this.active = undefined;
        });
        const created = this.opts.perf.list().find((c) => c.id === campaignId);
        if (!created) throw new ServiceError('INTERNAL', `campaign ${campaignId} was not stored`);
        return created;
      } finally {
        this.starting = false;
      }
    });
  }

  async cancel(req: PerfRef): Promise<Result<void>> {
    const active = this.active;
    if (active?.campaignId !== req.campaignId) return err('NOT_FOUND', `campaign ${req.campaignId} is not running`);
    active.controller.abort();
    await active.done.catch(() => undefined);
    return ok(undefined);
  }

  list(): Promise<Result<readonly PerfCampaign[]>> {
    return toResult(() => this.opts.perf.list());
  }

  get(req: PerfRef): Promise<Result<PerfCampaignDetail>> {
    return toResult(() => {
      const c = this.opts.perf.get(req.campaignId);
      if (!c) throw new ServiceError('NOT_FOUND', `campaign ${req.campaignId} not found`);
      return c;
    });
  }

  exportZip(req: PerfRef): Promise<Result<ExportedZip>> {
    return toResult(async () => {
      const c = this.opts.perf.get(req.campaignId);
      if (!c) throw new ServiceError('NOT_FOUND', `campaign ${req.campaignId} not found`);
      if (c.status === 'running') throw new ServiceError('BAD_INPUT', `campaign ${c.id} is still running: export it once it has ended`);
      return writePerfZip(c, path.join(dataLayout.exportsDir(this.opts.dataDir), `${c.id}.zip`), this.opts.appVersion);
    });
  }

  importZip(req: VerifyRequest): Promise<Result<PerfCampaign>> {
    return toResult(async () => {
      if (!path.isAbsolute(req.path)) throw new ServiceError('BAD_INPUT', `ZIP path must be absolute: ${req.path}`);
      const { requests: _requests, aggregates: _aggregates, ...campaign } = await refusingImport(
        importPerfZip(req.path, { perf: this.opts.perf, db: this.opts.db }),
        'a result ZIP is added to History on the History page',
      );
      this.opts.emit('perf:onDidImport', { campaignId: campaign.id });
      return campaign;
    }, 'BAD_INPUT');
  }

  setLabel(req: SetCampaignLabelRequest): Promise<Result<PerfCampaign>> {
    return toResult(() => {
      const { label, problem } = readLabel(req.label);
      if (problem) throw new ServiceError('BAD_INPUT', problem);
      if (!this.opts.perf.setLabel(req.campaignId, label)) throw new ServiceError('NOT_FOUND', `campaign ${req.campaignId} not found`);
      this.opts.emit('perf:onDidLabel', { campaignId: req.campaignId, label });
      const { requests: _requests, aggregates: _aggregates, ...campaign } = this.opts.perf.get(req.campaignId)!;
      return campaign;
    });
  }

  listZips(req: PerfRef): Promise<Result<readonly ExportFile[]>> {
    return toResult(() => exportFiles(dataLayout.exportsDir(this.opts.dataDir), req.campaignId));
  }

  delete(req: DeleteCampaignRequest): Promise<Result<DeletedCampaign>> {
    return toResult(async () => {
      const live = this.active?.campaignId === req.campaignId;
      const outcome = live ? ({ deleted: false, status: 'running' } as const) : this.opts.perf.delete(req.campaignId);
      if (!outcome.deleted) {
        if (outcome.status === 'missing') throw new ServiceError('NOT_FOUND', `campaign ${req.campaignId} not found`);
        throw new ServiceError('BAD_INPUT', `campaign ${req.campaignId} is running: cancel it before deleting it`);
      }
      this.opts.emit('perf:onDidDelete', { campaignId: req.campaignId });
      const files = req.deleteExport
        ? await deleteExportFiles(dataLayout.exportsDir(this.opts.dataDir), req.campaignId)
        : { deleted: [], errors: [] };
      return { campaignId: req.campaignId, requests: outcome.requests, deletedFiles: files.deleted, fileErrors: files.errors };
    });
  }
}
