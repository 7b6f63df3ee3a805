import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';

import { allMigrations } from '../../../../../../electron/main/db/migrations/all-migrations.js';
import { migrate } from '../../../../../../electron/main/db/open-database.js';
import { RunRepo } from '../../../../../../electron/main/db/run-repo.js';

describe('migration 0006-imports', () => {
  it('keeps a version-5 database\'s runs as made here', () => {
    const db = new Database(':memory:');
    expect(migrate(db, allMigrations, 5)).toBe(5);
    db.exec(`INSERT INTO runs (id, model_id, model_repo, model_revision, model_dir, packed_dir, weights, manifest_sha256, manifest_json,
      backend, device_label, residency, policy_json, app_version, dataset_sha256, total, status, created_at)
      VALUES ('old', 'm', 'r', 'v', '/models/m', NULL, 'int4', 'h', '{}', 'cpu', 'CPU', 'host', '{"batch":2}', '0', 'h', 1, 'completed', 't')`);
    expect(migrate(db, allMigrations)).toBe(allMigrations.at(-1)!.version);
    expect(new RunRepo(db).require('old')).toMatchObject({ id: 'old', modelDir: '/models/m', imported: null });
  });

  it('holds an import\'s sha256 to 64 characters', () => {
    const db = new Database(':memory:');
    migrate(db, allMigrations);
    db.exec(`INSERT INTO runs (id, model_id, model_repo, model_revision, model_dir, packed_dir, weights, manifest_sha256, manifest_json,
      backend, device_label, residency, policy_json, app_version, dataset_sha256, total, status, created_at)
      VALUES ('r', 'm', 'r', 'v', '', NULL, 'int4', 'h', '{}', 'cpu', 'CPU', 'host', '{}', '0', 'h', 1, 'completed', 't')`);
    expect(() => db.prepare(`UPDATE runs SET imported_sha256 = 'abc' WHERE id = 'r'`).run()).toThrow(/CHECK constraint failed/);
    db.prepare(`UPDATE runs SET imported_from = '/x.zip', imported_sha256 = ?, imported_at = 't' WHERE id = 'r'`).run('e'.repeat(64));
    expect(new RunRepo(db).require('r').imported).toEqual({ file: '/x.zip', sha256: 'e'.repeat(64), importedAt: 't' });
  });
});
