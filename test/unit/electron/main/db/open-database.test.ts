import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { allMigrations } from '../../../../../electron/main/db/migrations/all-migrations.js';
import { openDatabase } from '../../../../../electron/main/db/open-database.js';

describe('openDatabase', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'horizon-open-db-'));
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it('refuses a database of a newer schema without changing a byte of it', () => {
    const file = path.join(dir, 'newer.sqlite');
    const newer = allMigrations.at(-1)!.version + 5;
    const made = new Database(file);
    made.exec('CREATE TABLE future (x)');
    made.pragma(`user_version = ${newer}`);
    made.close();
    const before = readFileSync(file);

    expect(() => openDatabase(file)).toThrow(`${file}: cannot open the database (${file}: schema version ${newer} is newer than this app knows`);

    expect(readFileSync(file).equals(before)).toBe(true);
    const check = new Database(file, { readonly: true });
    expect(check.pragma('journal_mode', { simple: true })).toBe('delete');
    check.close();
  });
});
