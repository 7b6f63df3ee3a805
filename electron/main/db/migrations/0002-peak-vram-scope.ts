import type Database from 'better-sqlite3';

import type { Migration } from './migration.js';

/**
 * What a run's peak GPU memory measures: 'process' (NVML's per-process figure) or 'device' (the GPU's used memory,
 * other processes included). Runs from before this version keep NULL: their figure's scope is not known.
 */
export const migration0002PeakVramScope: Migration = {
  version: 2,
  name: 'peak-vram-scope',
  up(db: Database.Database) {
    db.exec(`
      ALTER TABLE run_figures ADD COLUMN peak_vram_scope TEXT CHECK (peak_vram_scope IN ('process', 'device'));
    `);
  },
};
