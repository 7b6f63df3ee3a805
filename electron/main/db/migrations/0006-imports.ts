import type Database from 'better-sqlite3';

import type { Migration } from './migration.js';

/**
 * Runs and campaigns read from a ZIP (another machine's, a colleague's): where they came from. One made here has all
 * three NULL; an imported one has all three set (an imported run has no model here to resume with).
 */
export const migration0006Imports: Migration = {
  version: 6,
  name: 'imports',
  up(db: Database.Database) {
    for (const table of ['runs', 'perf_campaigns']) {
      db.exec(`
        ALTER TABLE ${table} ADD COLUMN imported_from TEXT;
        ALTER TABLE ${table} ADD COLUMN imported_sha256 TEXT CHECK (imported_sha256 IS NULL OR length(imported_sha256) = 64);
        ALTER TABLE ${table} ADD COLUMN imported_at TEXT;
      `);
    }
  },
};
