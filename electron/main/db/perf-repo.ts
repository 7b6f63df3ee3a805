import type Database from 'better-sqlite3';

import type { RunBackend, ZipOrigin } from '../../common/ipc-contract.js';
import { aggregateCampaign, type PerfCampaign, type PerfCampaignDetail, type PerfRequestRecord, type PerfStatus } from '../../common/perf-campaign.js';
import { originOf, type OriginColumns } from './zip-origin.js';

interface CampaignRow extends OriginColumns {
  id: string;
  created_at: string;
  finished_at: string | null;
  status: PerfStatus;
  error: string | null;
  model_json: string;
  backend: RunBackend;
  device_label: string;
  peak_memory_scope: 'process' | 'device' | null;
  settings_json: string;
  configs_json: string;
  label: string | null;
}

interface RequestRow {
  config: number;
  block: number;
  key: number;
  prompt_tokens: number;
  tokens: number;
  ttft_ms: number;
  decode_tokens_per_second: number;
  response_ms: number;
  peak_memory_bytes: number;
  h2d_bytes: number;
  expert_hits: number;
  expert_misses: number;
  expert_evictions: number;
}

const toCampaign = (r: CampaignRow): PerfCampaign => ({
  id: r.id,
  createdAt: r.created_at,
  finishedAt: r.finished_at,
  status: r.status,
  error: r.error,
  model: JSON.parse(r.model_json) as PerfCampaign['model'],
  backend: r.backend as RunBackend,
  deviceLabel: r.device_label,
  peakMemoryScope: r.peak_memory_scope,
  settings: JSON.parse(r.settings_json) as PerfCampaign['settings'],
  configs: JSON.parse(r.configs_json) as PerfCampaign['configs'],
  imported: originOf(r),
  label: r.label,
});

const toRequest = (r: RequestRow): PerfRequestRecord => ({
  config: r.config,
  block: r.block,
  key: r.key,
  promptTokens: r.prompt_tokens,
  tokens: r.tokens,
  ttftMs: r.ttft_ms,
  decodeTokensPerSecond: r.decode_tokens_per_second,
  responseMs: r.response_ms,
  peakMemoryBytes: r.peak_memory_bytes,
  h2dBytes: r.h2d_bytes,
  expertHits: r.expert_hits,
  expertMisses: r.expert_misses,
  expertEvictions: r.expert_evictions,
});

/** Performance campaigns and their requests; aggregates are always computed from the stored requests. */
export class PerfRepo {
  constructor(private readonly db: Database.Database) {}

  create(c: Omit<PerfCampaign, 'finishedAt' | 'status' | 'error' | 'imported' | 'label'> & { readonly label?: string | null }): void {
    this.db
      .prepare(
        `INSERT INTO perf_campaigns (id, created_at, status, model_json, backend, device_label, peak_memory_scope, settings_json, configs_json, label)
         VALUES (?, ?, 'running', ?, ?, ?, ?, ?, ?, ?)`,
      )
      .run(
        c.id, c.createdAt, JSON.stringify(c.model), c.backend, c.deviceLabel, c.peakMemoryScope, JSON.stringify(c.settings), JSON.stringify(c.configs),
        c.label ?? null,
      );
  }

  /**
   * Stores a campaign read from a campaign ZIP, ended as its ZIP says, with all its requests, in one transaction.
   * Throws when a campaign with its id is stored already.
   */
  createImported(c: PerfCampaign & { readonly status: Exclude<PerfStatus, 'running'>; readonly imported: ZipOrigin }, requests: readonly PerfRequestRecord[]): void {
    this.db.transaction(() => {
      this.db
        .prepare(
          `INSERT INTO perf_campaigns (id, created_at, finished_at, status, error, model_json, backend, device_label, peak_memory_scope,
             settings_json, configs_json, imported_from, imported_sha256, imported_at, label)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        )
        .run(
          c.id, c.createdAt, c.finishedAt, c.status, c.error, JSON.stringify(c.model), c.backend, c.deviceLabel, c.peakMemoryScope,
          JSON.stringify(c.settings), JSON.stringify(c.configs), c.imported.file, c.imported.sha256, c.imported.importedAt, c.label,
        );
      for (const r of requests) this.addRequest(c.id, r);
    })();
  }

  /** Records where the runtime put the weights, and the device, once a configuration has loaded. */
  updateDevice(id: string, patch: { backend: RunBackend; deviceLabel: string; peakMemoryScope?: 'process' | 'device' | null; configs: PerfCampaign['configs'] }): void {
    this.db
      .prepare('UPDATE perf_campaigns SET backend = ?, device_label = ?, peak_memory_scope = COALESCE(?, peak_memory_scope), configs_json = ? WHERE id = ?')
      .run(patch.backend, patch.deviceLabel, patch.peakMemoryScope ?? null, JSON.stringify(patch.configs), id);
  }

  /** One measured request, stored as it finishes: a campaign stopped part-way keeps what it measured. */
  addRequest(id: string, r: PerfRequestRecord): void {
    this.db
      .prepare(
        `INSERT INTO perf_requests (campaign_id, config, block, key, prompt_tokens, tokens, ttft_ms, decode_tokens_per_second, response_ms,
           peak_memory_bytes, h2d_bytes, expert_hits, expert_misses, expert_evictions) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      )
      .run(id, r.config, r.block, r.key, r.promptTokens, r.tokens, r.ttftMs, r.decodeTokensPerSecond, r.responseMs, r.peakMemoryBytes, r.h2dBytes, r.expertHits, r.expertMisses, r.expertEvictions);
  }

  finish(id: string, status: Exclude<PerfStatus, 'running'>, error: string | null = null, now = new Date().toISOString()): void {
    this.db.prepare('UPDATE perf_campaigns SET status = ?, error = ?, finished_at = ? WHERE id = ?').run(status, error, now, id);
  }

  /** Sets or clears (null) a campaign's label, a valid one (label.ts); false when there is no such campaign. */
  setLabel(id: string, label: string | null): boolean {
    return this.db.prepare('UPDATE perf_campaigns SET label = ? WHERE id = ?').run(label, id).changes === 1;
  }

  /** A campaign left running by a process that stopped: failed, with why. */
  failInterrupted(message: string): number {
    return this.db.prepare("UPDATE perf_campaigns SET status = 'failed', error = ?, finished_at = created_at WHERE status = 'running'").run(message).changes;
  }

  /** Newest first. */
  list(): PerfCampaign[] {
    return (this.db.prepare('SELECT * FROM perf_campaigns ORDER BY created_at DESC, rowid DESC').all() as CampaignRow[]).map(toCampaign);
  }

  /** How many requests the campaign has measured (0 for none, or no such campaign). */
  requestCount(id: string): number {
    return this.db.prepare('SELECT COUNT(*) FROM perf_requests WHERE campaign_id = ?').pluck().get(id) as number;
  }

  get(id: string): PerfCampaignDetail | undefined {
    const row = this.db.prepare('SELECT * FROM perf_campaigns WHERE id = ?').get(id) as CampaignRow | undefined;
    if (!row) return undefined;
    const c = toCampaign(row);
    const requests = (this.db.prepare('SELECT * FROM perf_requests WHERE campaign_id = ? ORDER BY config, block, rowid').all(id) as RequestRow[]).map(toRequest);
    return { ...c, requests, aggregates: aggregateCampaign(c.configs.length, requests, c.backend === 'cpu') };
  }

  /**
   * Deletes a campaign with its requests in one transaction, holding the write lock from the status check on: a
   * campaign still running (its job writes to it) is not deleted. Says how many requests went, or why nothing did.
   */
  delete(id: string): { readonly deleted: true; readonly requests: number } | { readonly deleted: false; readonly status: 'missing' | 'running' } {
    return this.db.transaction(() => {
      const status = this.db.prepare('SELECT status FROM perf_campaigns WHERE id = ?').pluck().get(id) as PerfStatus | undefined;
      if (status === undefined) return { deleted: false as const, status: 'missing' as const };
      if (status === 'running') return { deleted: false as const, status };
      // By name as well as by the schema's cascade: a connection without foreign_keys = ON leaves no orphans.
      const requests = this.db.prepare('DELETE FROM perf_requests WHERE campaign_id = ?').run(id).changes;
      this.db.prepare('DELETE FROM perf_campaigns WHERE id = ?').run(id);
      return { deleted: true as const, requests };
    }).immediate();
  }
}
