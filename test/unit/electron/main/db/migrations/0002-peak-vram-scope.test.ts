import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';

import { migration0001Init } from '../../../../../../electron/main/db/migrations/0001-init.js';
import { migration0002PeakVramScope } from '../../../../../../electron/main/db/migrations/0002-peak-vram-scope.js';
import { migrate } from '../../../../../../electron/main/db/open-database.js';

function insertRun(db: Database.Database, id: string): void {
  db.exec(`INSERT INTO runs (id, model_id, model_repo, model_revision, model_dir, packed_dir, weights, manifest_sha256, manifest_json,
    backend, device_label, residency, policy_json, app_version, dataset_sha256, total, status, created_at)
    VALUES ('${id}','m','r','v','d',NULL,'int4','h','{}','CUDA','GPU','full','{}','0','h',1,'completed','t')`);
  db.exec(`INSERT INTO run_figures (run_id, peak_vram_bytes) VALUES ('${id}', 1234)`);
}

describe('migration 0002-peak-vram-scope', () => {
  it('adds the scope to a version-1 database, keeping its figures and leaving their scope unknown', () => {
    const db = new Database(':memory:');
    migrate(db, [migration0001Init]);
    insertRun(db, 'old');
    expect(migrate(db, [migration0001Init, migration0002PeakVramScope])).toBe(2);
    expect(db.prepare(`SELECT peak_vram_bytes, peak_vram_scope FROM run_figures WHERE run_id = 'old'`).get()).toEqual({
      peak_vram_bytes: 1234,
      peak_vram_scope: null,
    });
  });

  it('accepts only process, device or NULL', () => {
    const db = new Database(':memory:');
    migrate(db, [migration0001Init, migration0002PeakVramScope]);
    insertRun(db, 'r');
    for (const scope of ['process', 'device']) {
      db.prepare(`UPDATE run_figures SET peak_vram_scope = ? WHERE run_id = 'r'`).run(scope);
    }
    expect(() => db.prepare(`UPDATE run_figures SET peak_vram_scope = 'gpu' WHERE run_id = 'r'`).run()).toThrow(/CHECK constraint failed/);
  });
});
