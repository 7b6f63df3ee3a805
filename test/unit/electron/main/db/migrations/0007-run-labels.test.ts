import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';

import { allMigrations } from '../../../../../../electron/main/db/migrations/all-migrations.js';
import { migrate } from '../../../../../../electron/main/db/open-database.js';
import { RunRepo } from '../../../../../../electron/main/db/run-repo.js';
import { insertOldRun } from './old-rows.js';

describe('migration 0007-run-labels', () => {
  it("leaves a version-6 database's runs without a label", () => {
    const db = new Database(':memory:');
    expect(migrate(db, allMigrations, 6)).toBe(6);
    insertOldRun(db, 'old');
    expect(migrate(db, allMigrations, 7)).toBe(7);
    expect(new RunRepo(db).require('old')).toMatchObject({ id: 'old', label: null });
  });

  it('stores, replaces and clears a label, holding it to 1-80 characters', () => {
    const db = new Database(':memory:');
    migrate(db, allMigrations, 7);
    insertOldRun(db, 'r');
    const runs = new RunRepo(db);
    expect(runs.setLabel('r', 'baseline g32')).toBe(true);
    expect(runs.require('r').label).toBe('baseline g32');
    expect(runs.setLabel('r', 'x'.repeat(80))).toBe(true);
    expect(() => runs.setLabel('r', 'x'.repeat(81))).toThrow(/CHECK constraint failed/);
    expect(() => runs.setLabel('r', '')).toThrow(/CHECK constraint failed/);
    expect(runs.require('r').label).toBe('x'.repeat(80));
    expect(runs.setLabel('r', null)).toBe(true);
    expect(runs.require('r').label).toBeNull();
    expect(runs.setLabel('missing', 'x')).toBe(false);
  });
});
