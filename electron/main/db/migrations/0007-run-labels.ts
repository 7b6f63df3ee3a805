import type Database from 'better-sqlite3';

import type { Migration } from './migration.js';

/** A run's label, given by whoever keeps it ("baseline g32"); NULL for none. */
export const migration0007RunLabels: Migration = {
  version: 7,
  name: 'run-labels',
  up(db: Database.Database) {
    db.exec('ALTER TABLE runs ADD COLUMN label TEXT CHECK (label IS NULL OR length(label) BETWEEN 1 AND 80)');
  },
};
