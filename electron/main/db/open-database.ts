import { mkdirSync } from 'node:fs';
import path from 'node:path';

import Database from 'better-sqlite3';

import { allMigrations } from './migrations/all-migrations.js';
import type { Migration } from './migrations/migration.js';

/** The database's `user_version`; throws when it is newer than the last of `migrations`. Reads only. */
function checkSchemaVersion(db: Database.Database, migrations: readonly Migration[]): number {
  const version = db.pragma('user_version', { simple: true }) as number;
  const latest = migrations.at(-1)?.version ?? 0;
  if (version > latest) {
    throw new Error(`${db.name}: schema version ${version} is newer than this app knows (${latest})`);
  }
  return version;
}

/** Applies the migrations above the database's `user_version`, each in its own transaction. */
export function migrate(db: Database.Database, migrations: readonly Migration[] = allMigrations, target?: number): number {
  let version = checkSchemaVersion(db, migrations);
  for (const m of migrations) {
    if (m.version <= version || (target !== undefined && m.version > target)) continue;
    if (m.version !== version + 1) throw new Error(`migration ${m.version}-${m.name} does not follow version ${version}`);
    db.transaction(() => {
      m.up(db);
      db.pragma(`user_version = ${m.version}`);
    })();
    version = m.version;
  }
  return version;
}

/** Opens (creating if needed) the app database with WAL, foreign keys on, and the schema migrated. */
export function openDatabase(file: string): Database.Database {
  if (file !== ':memory:') mkdirSync(path.dirname(file), { recursive: true });
  const db = new Database(file);
  try {
    db.pragma('busy_timeout = 5000');
    // Before journal_mode = WAL, which rewrites the file header: a database this app cannot use is left as it was.
    checkSchemaVersion(db, allMigrations);
    if (file !== ':memory:') db.pragma('journal_mode = WAL');
    db.pragma('foreign_keys = ON');
    migrate(db);
  } catch (e) {
    db.close();
    throw new Error(`${file}: cannot open the database (${(e as Error).message})`, { cause: e });
  }
  return db;
}
