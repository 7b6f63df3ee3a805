import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';

import { allMigrations } from '../../../../../../electron/main/db/migrations/all-migrations.js';
import { migrate } from '../../../../../../electron/main/db/open-database.js';
import { RunRepo } from '../../../../../../electron/main/db/run-repo.js';
import { sampleRun } from '../sample-run.js';

const insertRun = (db: Database.Database, id: string) =>
  db.exec(`INSERT INTO runs (id, model_id, model_repo, model_revision, model_dir, packed_dir, weights, manifest_sha256, manifest_json,
    backend, device_label, residency, policy_json, app_version, dataset_sha256, total, status, created_at)
    VALUES ('${id}', 'm', 'r', 'v', '/models/m', NULL, 'int4', 'h', '{}', 'cpu', 'CPU', 'host', '{"batch":2}', '0', 'h', 1, 'completed', 't')`);

describe('migration 0009-run-quality', () => {
  it("leaves a version-8 database's runs without a carried check", () => {
    const db = new Database(':memory:');
    expect(migrate(db, allMigrations, 8)).toBe(8);
    insertRun(db, 'old');
    expect(migrate(db, allMigrations, 9)).toBe(9);
    expect(new RunRepo(db).require('old')).toMatchObject({ id: 'old', qualityJson: null });
  });

  it("keeps an imported run's quality.json text as given, and none for a run made here", () => {
    const db = new Database(':memory:');
    migrate(db, allMigrations, 9);
    const runs = new RunRepo(db);
    expect(runs.create(sampleRun('here')).qualityJson).toBeNull();
    const text = '{\n  "format": "horizon-quality-v1"\n}\n';
    const imported = runs.createImported({
      ...sampleRun('there'), status: 'completed', createdAt: 't0', finishedAt: 't1', label: null, qualityJson: text,
      imported: { file: '/zips/there.zip', sha256: 'd'.repeat(64), importedAt: 't2' },
      figures: { batches: 1, generatedTokens: 3, wallMs: 10, peakMemoryBytes: 0, peakMemoryScope: null, h2dBytes: 0 },
    });
    expect(imported.qualityJson).toBe(text);
  });
});
