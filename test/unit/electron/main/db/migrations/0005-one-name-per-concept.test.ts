import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';

import { allMigrations } from '../../../../../../electron/main/db/migrations/all-migrations.js';
import { migrate } from '../../../../../../electron/main/db/open-database.js';

const before = allMigrations.filter((m) => m.version < 5);

function insertRun(db: Database.Database, id: string, backend: string): void {
  db.exec(`INSERT INTO runs (id, model_id, model_repo, model_revision, model_dir, packed_dir, weights, manifest_sha256, manifest_json,
    backend, device_label, residency, policy_json, app_version, dataset_sha256, total, status, created_at)
    VALUES ('${id}','m','r','v','d',NULL,'int4','h','{}','${backend}','GPU','full','{}','0','h',1,'completed','t')`);
}

function insertCampaign(db: Database.Database, id: string, backend: string): void {
  db.exec(`INSERT INTO perf_campaigns (id, created_at, status, model_json, backend, device_label, settings_json, configs_json)
    VALUES ('${id}', 't', 'completed', '{}', '${backend}', 'CPU', '{}', '[]')`);
}

describe('migration 0005-one-name-per-concept', () => {
  it("renames a version-4 database's backends and peak-memory columns, keeping every figure", () => {
    const db = new Database(':memory:');
    expect(migrate(db, before)).toBe(4);
    insertRun(db, 'cpu-run', 'CPU');
    insertRun(db, 'gpu-run', 'CUDA');
    insertRun(db, 'waiting', 'pending');
    db.exec(`INSERT INTO run_figures (run_id, peak_vram_bytes, peak_vram_scope) VALUES ('gpu-run', 1234, 'device')`);
    insertCampaign(db, 'c1', 'CPU');
    insertCampaign(db, 'c2', 'CUDA');

    expect(migrate(db, allMigrations, 5)).toBe(5);
    expect(db.prepare('SELECT id, backend FROM runs ORDER BY id').all()).toEqual([
      { id: 'cpu-run', backend: 'cpu' },
      { id: 'gpu-run', backend: 'cuda' },
      { id: 'waiting', backend: 'pending' },
    ]);
    expect(db.prepare('SELECT id, backend, device_label FROM perf_campaigns ORDER BY id').all()).toEqual([
      { id: 'c1', backend: 'cpu', device_label: 'CPU' },
      { id: 'c2', backend: 'cuda', device_label: 'CPU' },
    ]);
    expect(db.prepare(`SELECT peak_memory_bytes, peak_memory_scope FROM run_figures WHERE run_id = 'gpu-run'`).get()).toEqual({
      peak_memory_bytes: 1234,
      peak_memory_scope: 'device',
    });
  });

  it('keeps the scope constraint under the new column name', () => {
    const db = new Database(':memory:');
    migrate(db, allMigrations);
    insertRun(db, 'r', 'cuda');
    db.exec(`INSERT INTO run_figures (run_id, peak_memory_bytes, peak_memory_scope) VALUES ('r', 1, 'process')`);
    expect(() => db.prepare(`UPDATE run_figures SET peak_memory_scope = 'gpu' WHERE run_id = 'r'`).run()).toThrow(/CHECK constraint failed/);
  });
});
