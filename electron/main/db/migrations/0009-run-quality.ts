import type Database from 'better-sqlite3';

import type { Migration } from './migration.js';

/**
 * The INT4 check a run's result ZIP carried (quality.json, verbatim), kept for an imported run so that its re-export
 * holds the same bytes; NULL for a run made here (its export reads the check stored beside its model).
 */
export const migration0009RunQuality: Migration = {
  version: 9,
  name: 'run-quality',
  up(db: Database.Database) {
    db.exec('ALTER TABLE runs ADD COLUMN quality_json TEXT');
  },
};
