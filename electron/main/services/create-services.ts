import path from 'node:path';

import type Database from 'better-sqlite3';

import type { Api, EmitEvent } from '../../common/ipc-contract.js';
import { dataLayout, INTERRUPTED_CAMPAIGN, INTERRUPTED_RUN, lockDataDir } from '../data-dir.js';
import { cannotOpenDatabase, openDatabase } from '../db/open-database.js';
import { ResponseRepo } from '../db/response-repo.js';
import { PerfRepo } from '../db/perf-repo.js';
import { RunRepo } from '../db/run-repo.js';
import type { EvalInputs } from '../jobs/eval-inputs.js';
import { loadEvalInputs } from '../jobs/eval-inputs.js';
import type { PackerLauncher } from '../prep/pack-model.js';
import { WorkerClient } from '../worker-client.js';
import type { WorkerSpawner } from '../worker-client.js';
import { ExportService } from './export-service.js';
import { type ExternalChanges, watchExternalChanges } from './external-changes.js';
import { ModelsService } from './models-service.js';
import { PerfService } from './perf-service.js';
import { RunsService } from './runs-service.js';
import { ServiceError } from './service-result.js';
import { SystemService, type SystemServiceOptions } from './system-service.js';

export interface ServicesOptions {
  readonly dataDir: string;
  readonly hubUrl: string;
  readonly spawner: WorkerSpawner;
  readonly emit: EmitEvent;
  readonly appVersion: string;
  /** SQLite file; default `<dataDir>/runmap.sqlite`. */
  readonly databaseFile?: string;
  /** Where eval assets are imported from when the data dir lacks them (default `<repo>/../shared`). */
  readonly sharedAssetsDir?: string;
  /** The desktop shell's native file dialog (absent in `horizon serve`). */
  readonly pickPath?: SystemServiceOptions['pickPath'];
  /** How long a cancelled run's worker may take to stop before it is restarted (RunsService's default otherwise). */
  readonly cancelGraceMs?: number;
  /** How preparation starts the INT4 packer (the desktop shell: a utilityProcess); a Node child process otherwise. */
  readonly packer?: PackerLauncher;
  /** How often to look for runs another process deleted (EXTERNAL_CHECK_MS otherwise). */
  readonly externalCheckMs?: number;
}

export interface Services {
  readonly api: Api;
  readonly db: Database.Database;
  readonly worker: WorkerClient;
  readonly runs: RunsService;
  /** Announces runs another process (`horizon delete`) deleted; its timer calls check() every externalCheckMs. */
  readonly external: ExternalChanges;
  /** Cancels the active run, waits for it, stops the worker and closes the database. */
  dispose(): Promise<void>;
}

/**
 * Locks the data folder, opens the database, marks runs a previous process left running as failed, and builds the
 * four services.
 */
export function createServices(opts: ServicesOptions): Services {
  const unlock = lockDataDir(opts.dataDir);
  const dbFile = opts.databaseFile ?? dataLayout.database(opts.dataDir);
  let db: Database.Database | undefined;
  let runRepo: RunRepo;
  try {
    db = openDatabase(dbFile);
    runRepo = new RunRepo(db);
    // The first write: a database file that opened but cannot be written (read-only) fails here.
    runRepo.failInterrupted(INTERRUPTED_RUN);
    new PerfRepo(db).failInterrupted(INTERRUPTED_CAMPAIGN);
  } catch (error) {
    const opened = db !== undefined;
    db?.close();
    unlock();
    throw opened ? cannotOpenDatabase(dbFile, error) : error;
  }
  const responseRepo = new ResponseRepo(db);
  const external = watchExternalChanges(db, opts.emit, opts.externalCheckMs);
  const emit: EmitEvent = (event, payload) => {
    external.noted(event, payload);
    opts.emit(event, payload);
  };
  const worker = new WorkerClient(opts.spawner);
  let inputs: Promise<EvalInputs> | undefined;
  const getInputs = (): Promise<EvalInputs> => {
    inputs ??= loadEvalInputs(opts.dataDir, ...(opts.sharedAssetsDir ? [opts.sharedAssetsDir] : [])).catch((e: unknown) => {
      inputs = undefined;
      throw e;
    });
    return inputs;
  };
  const runs = new RunsService({
    runs: runRepo,
    responses: responseRepo,
    runtime: worker,
    dataDir: opts.dataDir,
    appVersion: opts.appVersion,
    emit,
    inputs: getInputs,
    ...(opts.cancelGraceMs !== undefined ? { cancelGraceMs: opts.cancelGraceMs } : {}),
    busy: () => (perf.activeCampaign ? `performance campaign ${perf.activeCampaign.campaignId} is measuring; wait for it or cancel it` : null),
  });
  const perf: PerfService = new PerfService({
    perf: new PerfRepo(db),
    db,
    runtime: worker,
    dataDir: opts.dataDir,
    appVersion: opts.appVersion,
    emit,
    inputs: getInputs,
    busy: () => (runs.activeRun ? `run ${runs.activeRun.runId} is generating; a campaign measures alone (wait for it or cancel it)` : null),
  });
  const api: Api = {
    system: new SystemService({
      worker, dataDir: opts.dataDir, hubUrl: opts.hubUrl, appVersion: opts.appVersion,
      ...(opts.pickPath ? { pickPath: opts.pickPath } : {}),
    }),
    models: new ModelsService({
      dataDir: opts.dataDir, hubUrl: opts.hubUrl, emit: opts.emit, ...(opts.packer ? { packer: opts.packer } : {}),
      beforeDelete: async (preparedDir) => {
        const active = runs.activeRun;
        const run = active ? runRepo.get(active.runId) : undefined;
        if (run && path.dirname(run.modelDir) === preparedDir) {
          throw new ServiceError('BAD_INPUT', `run ${run.id} is using this model; cancel it before deleting the model`);
        }
        await worker.unload();
      },
    }),
    runs,
    export: new ExportService({ runs: runRepo, responses: responseRepo, db, dataDir: opts.dataDir, inputs: getInputs, emit }),
    perf,
  };
  return {
    api,
    db,
    worker,
    runs,
    external,
    async dispose() {
      const active = runs.activeRun;
      if (active) {
        await runs.cancel({ runId: active.runId });
        await active.done.catch(() => undefined);
      }
      const campaign = perf.activeCampaign;
      if (campaign) await perf.cancel({ campaignId: campaign.campaignId });
      external.stop();
      worker.dispose();
      db.close();
      unlock();
    },
  };
}
