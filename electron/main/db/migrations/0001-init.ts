import type Database from 'better-sqlite3';

import type { Migration } from './migration.js';

/** Runs, their responses, per-instruction verdicts and per-run performance figures. */
export const migration0001Init: Migration = {
  version: 1,
  name: 'init',
  up(db: Database.Database) {
    db.exec(`
      CREATE TABLE runs (
        id TEXT PRIMARY KEY,
        model_id TEXT NOT NULL,
        model_repo TEXT NOT NULL,
        model_revision TEXT NOT NULL,
        model_dir TEXT NOT NULL,
        packed_dir TEXT,
        weights TEXT NOT NULL CHECK (weights IN ('int4', 'bf16')),
        manifest_sha256 TEXT NOT NULL,
        manifest_json TEXT NOT NULL,
        backend TEXT NOT NULL,
        device_label TEXT NOT NULL,
        residency TEXT NOT NULL,
        policy_json TEXT NOT NULL,
        app_version TEXT NOT NULL,
        dataset_sha256 TEXT NOT NULL,
        total INTEGER NOT NULL CHECK (total >= 0),
        status TEXT NOT NULL CHECK (status IN ('queued', 'running', 'cancelled', 'failed', 'completed')),
        error TEXT,
        created_at TEXT NOT NULL,
        started_at TEXT,
        finished_at TEXT
      ) STRICT;
      CREATE INDEX runs_by_created ON runs (created_at DESC);

      CREATE TABLE responses (
        run_id TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
        key INTEGER NOT NULL,
        position INTEGER NOT NULL,
        prompt TEXT NOT NULL,
        response TEXT NOT NULL,
        tokens INTEGER NOT NULL,
        finish_reason TEXT NOT NULL CHECK (finish_reason IN ('stop', 'length', 'cancelled')),
        ttft_ms REAL,
        decode_tokens_per_second REAL,
        strict_pass INTEGER NOT NULL CHECK (strict_pass IN (0, 1)),
        loose_pass INTEGER NOT NULL CHECK (loose_pass IN (0, 1)),
        created_at TEXT NOT NULL,
        PRIMARY KEY (run_id, key)
      ) STRICT;
      CREATE INDEX responses_by_position ON responses (run_id, position);

      CREATE TABLE verdicts (
        run_id TEXT NOT NULL,
        key INTEGER NOT NULL,
        idx INTEGER NOT NULL,
        instruction_id TEXT NOT NULL,
        kwargs_json TEXT NOT NULL,
        strict INTEGER NOT NULL CHECK (strict IN (0, 1)),
        loose INTEGER NOT NULL CHECK (loose IN (0, 1)),
        PRIMARY KEY (run_id, key, idx),
        FOREIGN KEY (run_id, key) REFERENCES responses (run_id, key) ON DELETE CASCADE
      ) STRICT;
      CREATE INDEX verdicts_by_instruction ON verdicts (run_id, instruction_id);

      CREATE TABLE run_figures (
        run_id TEXT PRIMARY KEY REFERENCES runs (id) ON DELETE CASCADE,
        batches INTEGER NOT NULL DEFAULT 0,
        generated_tokens INTEGER NOT NULL DEFAULT 0,
        wall_ms REAL NOT NULL DEFAULT 0,
        peak_vram_bytes INTEGER NOT NULL DEFAULT 0,
        h2d_bytes INTEGER NOT NULL DEFAULT 0
      ) STRICT;
    `);
  },
};
