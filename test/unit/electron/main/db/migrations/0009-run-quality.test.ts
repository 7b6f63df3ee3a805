import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';

import { allMigrations } from '../../../../../../electron/main/db/migrations/all-migrations.js';
import { migrate } from '../../../../../../electron/main/db/open-database.js';
import { RunRepo } from '../../../../../../electron/main/db/run-repo.js';
import { sampleRun } from '../sample-run.js';
import { insertOldRun } from './old-rows.js';

describe('migration 0009-run-quality', () => {
  it("leaves a version-8 database's runs without a carried check", () => {
    const db = new Database(':memory:');
    expect(migrate(db, allMigrations, 8)).toBe(8);
    insertOldRun(db, 'old');
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
