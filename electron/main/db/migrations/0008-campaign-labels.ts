import type Database from 'better-sqlite3';

import type { Migration } from './migration.js';

/** A performance campaign's label, as runs have theirs (0007); NULL for none. */
export const migration0008CampaignLabels: Migration = {
  version: 8,
  name: 'campaign-labels',
  up(db: Database.Database) {
    db.exec('ALTER TABLE perf_campaigns ADD COLUMN label TEXT CHECK (label IS NULL OR length(label) BETWEEN 1 AND 80)');
  },
};
