import type Database from 'better-sqlite3';

import type { Migration } from './migration.js';

/**
 * A run's expert-cache counts on the CUDA backend (hits, misses, evictions over every job). NULL until a job reports
 * them: the CPU backend never does, and runs from before this version did not.
 */
export const migration0003ExpertCache: Migration = {
  version: 3,
  name: 'expert-cache',
  up(db: Database.Database) {
    db.exec(`
      ALTER TABLE run_figures ADD COLUMN expert_hits INTEGER;
      ALTER TABLE run_figures ADD COLUMN expert_misses INTEGER;
      ALTER TABLE run_figures ADD COLUMN expert_evictions INTEGER;
    `);
  },
};
