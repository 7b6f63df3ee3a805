import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';

import { allMigrations } from '../../../../../../electron/main/db/migrations/all-migrations.js';
import { migrate } from '../../../../../../electron/main/db/open-database.js';
import { PerfRepo } from '../../../../../../electron/main/db/perf-repo.js';

const insertCampaign = (db: Database.Database, id: string) =>
  db.exec(`INSERT INTO perf_campaigns (id, created_at, status, model_json, backend, device_label, peak_memory_scope, settings_json, configs_json)
    VALUES ('${id}', 't', 'completed', '{}', 'cpu', 'CPU', NULL, '{"keys":[]}', '[]')`);

describe('migration 0008-campaign-labels', () => {
  it("leaves a version-7 database's campaigns without a label", () => {
    const db = new Database(':memory:');
    expect(migrate(db, allMigrations, 7)).toBe(7);
    insertCampaign(db, 'perf-old');
    expect(migrate(db, allMigrations, 8)).toBe(8);
    expect(new PerfRepo(db).get('perf-old')).toMatchObject({ id: 'perf-old', label: null });
  });

  it('stores, replaces and clears a label, holding it to 1-80 characters', () => {
    const db = new Database(':memory:');
    migrate(db, allMigrations, 8);
    insertCampaign(db, 'perf-1');
    const perf = new PerfRepo(db);
    expect(perf.setLabel('perf-1', 'RTX 4090')).toBe(true);
    expect(perf.list()[0]?.label).toBe('RTX 4090');
    expect(() => perf.setLabel('perf-1', 'x'.repeat(81))).toThrow(/CHECK constraint failed/);
    expect(() => perf.setLabel('perf-1', '')).toThrow(/CHECK constraint failed/);
    expect(perf.setLabel('perf-1', null)).toBe(true);
    expect(perf.get('perf-1')?.label).toBeNull();
    expect(perf.setLabel('perf-missing', 'x')).toBe(false);
  });
});
