import fs from 'node:fs';
import path from 'node:path';

import Database from 'better-sqlite3';

import { allMigrations } from './migrations/all-migrations.js';
import type { Migration } from './migrations/migration.js';

/**
 * The database's `user_version`; throws when it is newer than the last of `migrations`, or when the file holds
 * tables without a version (another program's database, named by a mistyped --db). Reads only.
 */
function checkSchemaVersion(db: Database.Database, migrations: readonly Migration[]): number {
  const version = db.pragma('user_version', { simple: true }) as number;
  const latest = migrations.at(-1)?.version ?? 0;
  if (version > latest) {
    throw new Error(`${db.name}: schema version ${version} is newer than this app knows (${latest})`);
  }
  if (version === 0) {
    // Migration 1 sets the version in the transaction that creates the tables: tables at version 0 are not ours.
    const tables = db.prepare(`SELECT name FROM sqlite_schema WHERE type = 'table' ORDER BY name LIMIT 4`).pluck().all() as string[];
    if (tables.length > 0) {
      throw new Error(`${db.name}: not a Horizon RunMap database (it holds other tables: ${tables.join(', ')}); it is left as it is`);
    }
  }
  return version;
}

/**
 * Applies the migrations above the database's `user_version`, each in its own transaction with its version bump.
 * Each transaction takes the write lock first and reads the version again: another process opening the same
 * database at the same moment has then either applied the step (it is skipped here) or waits for this one.
 */
export function migrate(db: Database.Database, migrations: readonly Migration[] = allMigrations, target?: number): number {
  let version = checkSchemaVersion(db, migrations);
  for (const m of migrations) {
    if (m.version <= version || (target !== undefined && m.version > target)) continue;
    version = db.transaction(() => {
      const now = checkSchemaVersion(db, migrations);
      if (now >= m.version) return now;
      if (m.version !== now + 1) throw new Error(`migration ${m.version}-${m.name} does not follow version ${now}`);
      m.up(db);
      db.pragma(`user_version = ${m.version}`);
      return m.version;
    }).immediate();
  }
  return version;
}

const SQLITE_CANNOT_WRITE = /^SQLITE_(CANTOPEN|READONLY|IOERR|PERM)/;

/**
 * Why SQLite could not open or write `file`, when the cause is a folder or file this process cannot write: SQLite
 * says only "unable to open database file" or "attempt to write a readonly database".
 */
function notWritable(file: string, error: unknown): string | undefined {
  if (!SQLITE_CANNOT_WRITE.test(String((error as { code?: unknown }).code))) return undefined;
  for (const p of [path.dirname(file), file]) {
    try {
      fs.accessSync(p, fs.constants.W_OK);
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code ?? (e as Error).message;
      if (code === 'ENOENT') continue;
      const what = p === file
        ? `the database file ${p} is not writable (${code})`
        : `its folder ${p} is not writable (${code}; SQLite creates ${path.basename(file)}-wal and -shm there even to read it)`;
      return `${what}: copy the data folder to a writable place, or fix its permissions`;
    }
  }
  return undefined;
}

/**
 * The error to throw when `file` cannot be opened or, just opened, written: naming the file, and the folder or file
 * that is not writable where that is the cause.
 */
export function cannotOpenDatabase(file: string, error: unknown): Error {
  const why = (file !== ':memory:' && notWritable(file, error)) || (error as Error).message;
  return new Error(`${file}: cannot open the database (${why})`, { cause: error });
}

/** Opens (creating if needed) the app database with WAL, foreign keys on, and the schema migrated. */
export function openDatabase(file: string): Database.Database {
  let db: Database.Database | undefined;
  try {
    if (file !== ':memory:') fs.mkdirSync(path.dirname(file), { recursive: true });
    db = new Database(file);
    db.pragma('busy_timeout = 5000');
    // Before journal_mode = WAL, which rewrites the file header: a database this app cannot use is left as it was.
    checkSchemaVersion(db, allMigrations);
    if (file !== ':memory:') db.pragma('journal_mode = WAL');
    db.pragma('foreign_keys = ON');
    migrate(db);
  } catch (e) {
    db?.close();
    throw cannotOpenDatabase(file, e);
  }
  return db;
}
