import type Database from 'better-sqlite3';

import type { Migration } from './migration.js';

/** Performance campaigns (`horizon perf`, the Performance page) and each measured request of them. */
export const migration0004PerfCampaigns: Migration = {
  version: 4,
  name: 'perf-campaigns',
  up(db: Database.Database) {
    db.exec(`
      CREATE TABLE perf_campaigns (
        id TEXT PRIMARY KEY,
        created_at TEXT NOT NULL,
        finished_at TEXT,
        status TEXT NOT NULL CHECK (status IN ('running', 'completed', 'failed', 'cancelled')),
        error TEXT,
        model_json TEXT NOT NULL,
        backend TEXT NOT NULL,
        device_label TEXT NOT NULL,
        peak_memory_scope TEXT CHECK (peak_memory_scope IN ('process', 'device')),
        settings_json TEXT NOT NULL,
        configs_json TEXT NOT NULL
      ) STRICT;
      CREATE TABLE perf_requests (
        campaign_id TEXT NOT NULL REFERENCES perf_campaigns (id) ON DELETE CASCADE,
        config INTEGER NOT NULL,
        block INTEGER NOT NULL,
        key INTEGER NOT NULL,
        prompt_tokens INTEGER NOT NULL,
        tokens INTEGER NOT NULL,
        ttft_ms REAL NOT NULL,
        decode_tokens_per_second REAL NOT NULL,
        response_ms REAL NOT NULL,
        peak_memory_bytes INTEGER NOT NULL,
        h2d_bytes INTEGER NOT NULL,
        expert_hits INTEGER NOT NULL,
        expert_misses INTEGER NOT NULL,
        expert_evictions INTEGER NOT NULL,
        PRIMARY KEY (campaign_id, config, block, key)
      ) STRICT;
    `);
  },
};
