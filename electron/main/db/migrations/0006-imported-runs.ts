import type Database from 'better-sqlite3';

import type { Migration } from './migration.js';

/**
 * Runs read from a result ZIP (another machine's, a colleague's): where they came from. A run made here has all three
 * NULL; an imported one has all three set, and no model on this machine to resume with.
 */
export const migration0006ImportedRuns: Migration = {
  version: 6,
  name: 'imported-runs',
  up(db: Database.Database) {
    db.exec(`
      ALTER TABLE runs ADD COLUMN imported_from TEXT;
      ALTER TABLE runs ADD COLUMN imported_sha256 TEXT CHECK (imported_sha256 IS NULL OR length(imported_sha256) = 64);
      ALTER TABLE runs ADD COLUMN imported_at TEXT;
    `);
  },
};
