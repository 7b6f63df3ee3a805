import fs, { readFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

import Database from 'better-sqlite3';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';

import { allMigrations } from '../../../../../electron/main/db/migrations/all-migrations.js';
import type { Migration } from '../../../../../electron/main/db/migrations/migration.js';
import { migrate, openDatabase } from '../../../../../electron/main/db/open-database.js';

const latest = allMigrations.at(-1)!.version;

const tables = (db: Database.Database): string[] =>
  db.prepare(`SELECT name FROM sqlite_schema WHERE type = 'table' ORDER BY name`).pluck().all() as string[];

describe('openDatabase', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'horizon-open-db-'));
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it('refuses a database of a newer schema without changing a byte of it', () => {
    const file = path.join(dir, 'newer.sqlite');
    const newer = latest + 5;
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

  it("refuses another program's database (tables, no version) without changing a byte of it", () => {
    const file = path.join(dir, 'notes.sqlite');
    const made = new Database(file);
    made.exec(`CREATE TABLE notes (t TEXT); INSERT INTO notes VALUES ('mine')`);
    made.close();
    const before = readFileSync(file);

    expect(() => openDatabase(file)).toThrow(`${file}: cannot open the database (${file}: not a Horizon RunMap database (it holds other tables: notes)`);

    expect(readFileSync(file).equals(before)).toBe(true);
    expect(fs.readdirSync(dir).filter((f) => f.startsWith('notes'))).toEqual(['notes.sqlite']);
  });

  it('creates the schema in an empty file', () => {
    const file = path.join(dir, 'empty.sqlite');
    fs.writeFileSync(file, '');
    const db = openDatabase(file);
    expect(db.pragma('user_version', { simple: true })).toBe(latest);
    expect(db.pragma('foreign_keys', { simple: true })).toBe(1);
    expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
    expect(tables(db)).toEqual(['perf_campaigns', 'perf_requests', 'responses', 'run_figures', 'runs', 'verdicts']);
    db.close();
  });

  it('says which folder is not writable when SQLite cannot open the database', async () => {
    // A folder where the file should be makes SQLite fail as it does on a read-only medium: "unable to open database file".
    const file = path.join(dir, 'ro', 'runmap.sqlite');
    await mkdir(file, { recursive: true });
    const access = fs.accessSync;
    vi.spyOn(fs, 'accessSync').mockImplementation((p, mode) => {
      if (p === path.dirname(file)) throw Object.assign(new Error(`EROFS: read-only file system, access '${String(p)}'`), { code: 'EROFS' });
      access(p, mode);
    });
    expect(() => openDatabase(file)).toThrow(
      `${file}: cannot open the database (its folder ${path.dirname(file)} is not writable (EROFS; SQLite creates runmap.sqlite-wal and ` +
        '-shm there even to read it): copy the data folder to a writable place, or fix its permissions)',
    );
  });
});

describe('migrate', () => {
  const step3 = (up: Migration['up']): Migration => ({ version: latest + 1, name: 'test', up });

  it('stops at the target version', () => {
    const db = new Database(':memory:');
    expect(migrate(db, allMigrations, 1)).toBe(1);
    expect(db.pragma('user_version', { simple: true })).toBe(1);
    expect(migrate(db)).toBe(latest);
  });

  it('refuses a list of steps with a gap in its versions', () => {
    const db = new Database(':memory:');
    const gap: Migration = { version: 3, name: 'gap', up: () => undefined };
    expect(() => migrate(db, [allMigrations[0]!, gap])).toThrow('migration 3-gap does not follow version 1');
    expect(db.pragma('user_version', { simple: true })).toBe(1);
  });

  it('refuses a database one version newer than the last step', () => {
    const db = new Database(':memory:');
    db.pragma(`user_version = ${latest + 1}`);
    expect(() => migrate(db)).toThrow(`schema version ${latest + 1} is newer than this app knows (${latest})`);
  });

  it('opens with foreign keys on and a busy timeout for another process holding the write lock', () => {
    const db = openDatabase(':memory:');
    expect(db.pragma('foreign_keys', { simple: true })).toBe(1);
    expect(db.pragma('busy_timeout', { simple: true })).toBe(5000);
    db.close();
  });

  it('leaves the schema and version as they were when a step fails', () => {
    const db = new Database(':memory:');
    migrate(db);
    const failing = step3((d) => {
      d.exec('CREATE TABLE half_done (x INTEGER) STRICT; ALTER TABLE runs ADD COLUMN extra TEXT');
      throw new Error('step failed');
    });
    expect(() => migrate(db, [...allMigrations, failing])).toThrow('step failed');
    expect(db.pragma('user_version', { simple: true })).toBe(latest);
    expect(tables(db)).toEqual(['perf_campaigns', 'perf_requests', 'responses', 'run_figures', 'runs', 'verdicts']);
    expect(db.prepare(`SELECT name FROM pragma_table_info('runs') WHERE name = 'extra'`).all()).toEqual([]);
  });

  it('skips a step that another process applied after this one read the version', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'horizon-migrate-race-'));
    try {
      const file = path.join(dir, 'runmap.sqlite');
      const other = new Database(file);
      migrate(other, allMigrations, 1);
      const db = new Database(file);
      db.pragma('busy_timeout = 5000');
      // The other process migrates between this connection's first read of the version and its first step.
      const pragma = db.pragma.bind(db);
      let raced = false;
      vi.spyOn(db, 'pragma').mockImplementation(((source: string, options?: Database.PragmaOptions) => {
        const out = pragma(source, options);
        if (source === 'user_version' && !raced) {
          raced = true;
          migrate(other);
        }
        return out;
      }) as typeof db.pragma);
      expect(migrate(db)).toBe(latest);
      expect(db.prepare(`SELECT COUNT(*) FROM pragma_table_info('run_figures') WHERE name = 'peak_memory_scope'`).pluck().get()).toBe(1);
      db.close();
      other.close();
    } finally {
      vi.restoreAllMocks();
      await rm(dir, { recursive: true, force: true });
    }
  });
});
