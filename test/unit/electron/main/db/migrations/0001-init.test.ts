import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';

import { migration0001Init } from '../../../../../../electron/main/db/migrations/0001-init.js';
import { migrate } from '../../../../../../electron/main/db/open-database.js';

function columns(db: Database.Database, table: string): string[] {
  return (db.prepare(`SELECT name FROM pragma_table_info(?)`).all(table) as { name: string }[]).map((c) => c.name);
}

describe('migration 0001-init', () => {
  it('migrates an empty database to version 1 with strict tables', () => {
    const db = new Database(':memory:');
    expect(migrate(db, [migration0001Init])).toBe(1);
    expect(db.pragma('user_version', { simple: true })).toBe(1);
    const tables = db
      .prepare(`SELECT name, sql FROM sqlite_schema WHERE type = 'table' ORDER BY name`)
      .all() as { name: string; sql: string }[];
    expect(tables.map((t) => t.name)).toEqual(['responses', 'run_figures', 'runs', 'verdicts']);
    for (const t of tables) expect(t.sql).toMatch(/\) STRICT$/);
    expect(columns(db, 'runs')).toEqual([
      'id', 'model_id', 'model_repo', 'model_revision', 'model_dir', 'packed_dir', 'weights', 'manifest_sha256', 'manifest_json',
      'backend', 'device_label', 'residency', 'policy_json', 'app_version', 'dataset_sha256', 'total', 'status', 'error',
      'created_at', 'started_at', 'finished_at',
    ]);
    expect(columns(db, 'responses')).toEqual([
      'run_id', 'key', 'position', 'prompt', 'response', 'tokens', 'finish_reason', 'ttft_ms', 'decode_tokens_per_second',
      'strict_pass', 'loose_pass', 'created_at',
    ]);
    expect(columns(db, 'verdicts')).toEqual(['run_id', 'key', 'idx', 'instruction_id', 'kwargs_json', 'strict', 'loose']);
    expect(columns(db, 'run_figures')).toEqual(['run_id', 'batches', 'generated_tokens', 'wall_ms', 'peak_vram_bytes', 'h2d_bytes']);
  });

  it('uses the instruction index for per-instruction queries', () => {
    const db = new Database(':memory:');
    migrate(db, [migration0001Init]);
    const plan = db
      .prepare(`EXPLAIN QUERY PLAN SELECT COUNT(*) FROM verdicts WHERE run_id = 'r' AND instruction_id = 'x'`)
      .all() as { detail: string }[];
    expect(plan.map((p) => p.detail).join('\n')).toMatch(/USING COVERING INDEX verdicts_by_instruction/);
  });

  it('enforces STRICT types and CHECK constraints', () => {
    const db = new Database(':memory:');
    migrate(db, [migration0001Init]);
    expect(() => db.prepare(`INSERT INTO run_figures (run_id, batches) VALUES ('r', 'many')`).run()).toThrow(/cannot store TEXT value in INTEGER column/);
    expect(() => db.exec(`INSERT INTO runs (id, model_id, model_repo, model_revision, model_dir, packed_dir, weights, manifest_sha256, manifest_json,
      backend, device_label, residency, policy_json, app_version, dataset_sha256, total, status, created_at)
      VALUES ('r','m','r','v','d',NULL,'fp8','h','{}','CPU','CPU','host','{}','0','h',1,'queued','t')`)).toThrow(/CHECK constraint failed/);
  });
});
