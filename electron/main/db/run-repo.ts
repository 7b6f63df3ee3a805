import type Database from 'better-sqlite3';

import { isLiveStatus, type LiveRunStatus, type RunBackend, type RunStatus, type WeightsFormat, type ZipOrigin } from '../../common/ipc-contract.js';
import { originOf, type OriginColumns } from './zip-origin.js';

/** The generation policy recorded with a run. */
export interface RunPolicy {
  readonly decoding: 'greedy';
  readonly maxNewTokens: number;
  readonly batch: number;
  /** EOS ids of the tokenizer and model config; generation stops at any of them. */
  readonly stopTokenIds: readonly number[];
  /** First N prompts of the dataset, or null for all. */
  readonly limit: number | null;
  /** The file the chat template was read from. */
  readonly chatTemplate: 'tokenizer_config.json' | 'chat_template.jinja';
  /** The backend asked for; the one used is the run's `backend`. */
  readonly requestedBackend: 'auto' | 'cpu' | 'cuda';
  /** CUDA device memory for resident experts; null (or absent, in runs of older versions) = the backend's default. */
  readonly expertBudgetBytes?: number | null;
  /** CUDA device index asked for; null (or absent, in runs of older versions) = the first device. */
  readonly cudaDevice?: number | null;
}

export interface RunRecord {
  readonly id: string;
  readonly modelId: string;
  readonly modelRepo: string;
  readonly modelRevision: string;
  /** The checkpoint folder (tokenizer, config, BF16 weights). */
  readonly modelDir: string;
  /** The qpacked-v2 INT4 folder, null for BF16 runs. */
  readonly packedDir: string | null;
  readonly weights: WeightsFormat;
  /** sha256 of the model's manifest file as written by preparation. */
  readonly manifestSha256: string;
  /** The model manifest as JSON text (copied into result ZIPs). */
  readonly manifestJson: string;
  /** "pending" until the model is first loaded for the run. */
  readonly backend: RunBackend;
  readonly deviceLabel: string;
  readonly residency: string;
  readonly policy: RunPolicy;
  readonly appVersion: string;
  /** sha256 of the input_data.jsonl the run used. */
  readonly datasetSha256: string;
  readonly total: number;
  readonly status: RunStatus;
  readonly error: string | null;
  readonly createdAt: string;
  readonly startedAt: string | null;
  readonly finishedAt: string | null;
  /** Where a run read from a result ZIP came from; null for a run made here. */
  readonly imported: ZipOrigin | null;
  /** Its label (label.ts); null for none. */
  readonly label: string | null;
  /** An imported run's INT4 check as its result ZIP carried it (quality.json, verbatim); null otherwise. */
  readonly qualityJson: string | null;
}

export type NewRun = Omit<RunRecord, 'status' | 'error' | 'createdAt' | 'startedAt' | 'finishedAt' | 'imported' | 'label' | 'qualityJson'> & {
  /** A valid label (label.ts); none when omitted. */
  readonly label?: string | null;
};

/** A run read from a result ZIP: it arrives finished, with the times and status its ZIP recorded. */
export interface ImportedRun extends NewRun {
  readonly status: 'completed' | 'cancelled' | 'failed';
  readonly createdAt: string;
  readonly finishedAt: string | null;
  readonly imported: ZipOrigin;
  readonly label: string | null;
  readonly qualityJson: string | null;
  readonly figures: {
    readonly batches: number;
    readonly generatedTokens: number;
    readonly wallMs: number;
    readonly peakMemoryBytes: number;
    readonly peakMemoryScope: 'process' | 'device' | null;
    readonly h2dBytes: number;
  };
}

interface RunRow extends OriginColumns {
  id: string;
  model_id: string;
  model_repo: string;
  model_revision: string;
  model_dir: string;
  packed_dir: string | null;
  weights: string;
  manifest_sha256: string;
  manifest_json: string;
  backend: RunBackend;
  device_label: string;
  residency: string;
  policy_json: string;
  app_version: string;
  dataset_sha256: string;
  total: number;
  status: string;
  error: string | null;
  created_at: string;
  started_at: string | null;
  finished_at: string | null;
  label: string | null;
  quality_json: string | null;
}

function fromRow(r: RunRow): RunRecord {
  return {
    id: r.id,
    modelId: r.model_id,
    modelRepo: r.model_repo,
    modelRevision: r.model_revision,
    modelDir: r.model_dir,
    packedDir: r.packed_dir,
    weights: r.weights as WeightsFormat,
    manifestSha256: r.manifest_sha256,
    manifestJson: r.manifest_json,
    backend: r.backend as RunBackend,
    deviceLabel: r.device_label,
    residency: r.residency,
    policy: JSON.parse(r.policy_json) as RunPolicy,
    appVersion: r.app_version,
    datasetSha256: r.dataset_sha256,
    total: r.total,
    status: r.status as RunStatus,
    error: r.error,
    createdAt: r.created_at,
    startedAt: r.started_at,
    finishedAt: r.finished_at,
    imported: originOf(r),
    label: r.label,
    qualityJson: r.quality_json,
  };
}

/** The runs aggregate: a run row and its figures row. */
export class RunRepo {
  constructor(private readonly db: Database.Database) {}

  create(run: NewRun, now = new Date().toISOString()): RunRecord {
    this.db.transaction(() => {
      this.db
        .prepare(
          `INSERT INTO runs (id, model_id, model_repo, model_revision, model_dir, packed_dir, weights, manifest_sha256, manifest_json,
             backend, device_label, residency, policy_json, app_version, dataset_sha256, total, status, created_at, label)
           VALUES (@id, @modelId, @modelRepo, @modelRevision, @modelDir, @packedDir, @weights, @manifestSha256, @manifestJson,
             @backend, @deviceLabel, @residency, @policyJson, @appVersion, @datasetSha256, @total, 'queued', @now, @label)`,
        )
        .run({ ...run, policyJson: JSON.stringify(run.policy), now, label: run.label ?? null });
      this.db.prepare('INSERT INTO run_figures (run_id) VALUES (?)').run(run.id);
    })();
    return this.require(run.id);
  }

  /**
   * Stores a run read from a result ZIP with its figures, finished as its ZIP says; its responses are stored next by
   * the caller, in the same transaction. Throws when a run with its id is stored already.
   */
  createImported(run: ImportedRun): RunRecord {
    this.db.transaction(() => {
      this.db
        .prepare(
          `INSERT INTO runs (id, model_id, model_repo, model_revision, model_dir, packed_dir, weights, manifest_sha256, manifest_json,
             backend, device_label, residency, policy_json, app_version, dataset_sha256, total, status, created_at, started_at,
             finished_at, imported_from, imported_sha256, imported_at, label, quality_json)
           VALUES (@id, @modelId, @modelRepo, @modelRevision, @modelDir, @packedDir, @weights, @manifestSha256, @manifestJson,
             @backend, @deviceLabel, @residency, @policyJson, @appVersion, @datasetSha256, @total, @status, @createdAt, @createdAt,
             @finishedAt, @importedFrom, @importedSha256, @importedAt, @label, @qualityJson)`,
        )
        .run({
          ...run,
          policyJson: JSON.stringify(run.policy),
          importedFrom: run.imported.file,
          importedSha256: run.imported.sha256,
          importedAt: run.imported.importedAt,
        });
      const f = run.figures;
      this.db
        .prepare(
          `INSERT INTO run_figures (run_id, batches, generated_tokens, wall_ms, peak_memory_bytes, peak_memory_scope, h2d_bytes)
           VALUES (?, ?, ?, ?, ?, ?, ?)`,
        )
        .run(run.id, f.batches, f.generatedTokens, f.wallMs, f.peakMemoryBytes, f.peakMemoryScope, f.h2dBytes);
    })();
    return this.require(run.id);
  }

  get(id: string): RunRecord | undefined {
    const row = this.db.prepare('SELECT * FROM runs WHERE id = ?').get(id) as RunRow | undefined;
    return row && fromRow(row);
  }

  require(id: string): RunRecord {
    const run = this.get(id);
    if (!run) throw new Error(`run ${id} not found in the database`);
    return run;
  }

  /** Newest first. */
  list(): RunRecord[] {
    return (this.db.prepare('SELECT * FROM runs ORDER BY created_at DESC, rowid DESC').all() as RunRow[]).map(fromRow);
  }

  markRunning(id: string, now = new Date().toISOString()): void {
    this.db
      .prepare(`UPDATE runs SET status = 'running', error = NULL, started_at = COALESCE(started_at, ?), finished_at = NULL WHERE id = ?`)
      .run(now, id);
  }

  /** Ends a run as completed, cancelled or failed. */
  finish(id: string, status: 'completed' | 'cancelled' | 'failed', error: string | null = null, now = new Date().toISOString()): void {
    this.db.prepare('UPDATE runs SET status = ?, error = ?, finished_at = ? WHERE id = ?').run(status, error, now, id);
  }

  /** Runs left "running" by a process that died: marked failed so they can be resumed. */
  failInterrupted(reason: string): number {
    // When the process stopped is not known; the run's last sign of progress (its last stored response, else its
    // start) is the closest time that is.
    return this.db
      .prepare(
        `UPDATE runs SET status = 'failed', error = ?,
           finished_at = COALESCE((SELECT MAX(created_at) FROM responses WHERE responses.run_id = runs.id), started_at, created_at)
         WHERE status IN ('running', 'queued')`,
      )
      .run(reason).changes;
  }

  /**
   * Deletes a run with its responses, verdicts and figures in one transaction, which holds the write lock from the
   * status check on: a run another process has just set running is not deleted under it. Says how many responses
   * went, or why nothing did: no such run, or one queued or running (its job writes to it).
   */
  delete(id: string): { readonly deleted: true; readonly responses: number } | { readonly deleted: false; readonly status: 'missing' | LiveRunStatus } {
    return this.db.transaction(() => {
      const status = this.db.prepare('SELECT status FROM runs WHERE id = ?').pluck().get(id) as RunStatus | undefined;
      if (status === undefined) return { deleted: false as const, status: 'missing' as const };
      if (isLiveStatus(status)) return { deleted: false as const, status };
      const responses = this.db.prepare('SELECT COUNT(*) FROM responses WHERE run_id = ?').pluck().get(id) as number;
      // The schema cascades these from runs; deleting them by name keeps a connection without foreign_keys = ON
      // from leaving orphans.
      this.db.prepare('DELETE FROM verdicts WHERE run_id = ?').run(id);
      this.db.prepare('DELETE FROM responses WHERE run_id = ?').run(id);
      this.db.prepare('DELETE FROM run_figures WHERE run_id = ?').run(id);
      this.db.prepare('DELETE FROM runs WHERE id = ?').run(id);
      return { deleted: true as const, responses };
    }).immediate();
  }

  /** Sets or clears (null) a run's label, a valid one (label.ts); false when there is no such run. */
  setLabel(id: string, label: string | null): boolean {
    return this.db.prepare('UPDATE runs SET label = ? WHERE id = ?').run(label, id).changes === 1;
  }

  /** Replaces the device fields when a run resumes on another device. */
  updateDevice(id: string, backend: RunBackend, deviceLabel: string, residency: string): void {
    this.db.prepare('UPDATE runs SET backend = ?, device_label = ?, residency = ? WHERE id = ?').run(backend, deviceLabel, residency, id);
  }
}
