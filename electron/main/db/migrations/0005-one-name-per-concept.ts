import type Database from 'better-sqlite3';

import type { Migration } from './migration.js';

/**
 * One name for a concept from the native runtime to the database: a run's or campaign's backend is 'cpu' or 'cuda'
 * (as the runtime names it; runs stored before this version say 'CPU'/'CUDA'), and a run's peak GPU memory is
 * peak_memory_bytes with its peak_memory_scope (as campaigns and the runtime name it).
 */
export const migration0005OneNamePerConcept: Migration = {
  version: 5,
  name: 'one-name-per-concept',
  up(db: Database.Database) {
    db.exec(`
      UPDATE runs SET backend = lower(backend) WHERE backend IN ('CPU', 'CUDA');
      UPDATE perf_campaigns SET backend = lower(backend) WHERE backend IN ('CPU', 'CUDA');
      ALTER TABLE run_figures RENAME COLUMN peak_vram_bytes TO peak_memory_bytes;
      ALTER TABLE run_figures RENAME COLUMN peak_vram_scope TO peak_memory_scope;
    `);
  },
};
