import type Database from 'better-sqlite3';

import type { EmitEvent } from '../../common/ipc-contract.js';

/** How often the database is asked whether another process changed it. */
export const EXTERNAL_CHECK_MS = 2_000;

export interface ExternalChanges {
  /** Compares now (the timer calls it; tests call it directly). */
  check(): void;
  /** A deletion this process announced itself: not announced again. */
  forget(runId: string): void;
  /** An import this process announced itself: not announced again. */
  know(runId: string): void;
  stop(): void;
}

/**
 * Announces the runs another process deleted from the database the app has open (`runs:onDidDelete`), and those it
 * imported (`runs:onDidImport`): `horizon delete` and `horizon import` may change History while the app holds the
 * data folder. SQLite's data_version changes only when another connection commits, so the run ids are compared only
 * then; between such commits they are re-read to learn the runs this process added.
 */
export function watchExternalChanges(db: Database.Database, emit: EmitEvent, intervalMs = EXTERNAL_CHECK_MS): ExternalChanges {
  const version = db.prepare('PRAGMA data_version').pluck();
  const ids = db.prepare('SELECT id, imported_at IS NOT NULL AS imported FROM runs');
  const readIds = () => new Map((ids.all() as { id: string; imported: number }[]).map((r) => [r.id, r.imported === 1]));
  let seen = version.get() as number;
  let known = readIds();
  const check = () => {
    if (!db.open) return;
    const now = version.get() as number;
    const current = readIds();
    if (now !== seen) {
      seen = now;
      for (const id of known.keys()) if (!current.has(id)) emit('runs:onDidDelete', { runId: id });
      for (const [id, imported] of current) if (imported && !known.has(id)) emit('runs:onDidImport', { runId: id });
    }
    known = current;
  };
  const timer = setInterval(() => {
    try {
      check();
    } catch {
      // A busy or closing database: the next tick asks again.
    }
  }, intervalMs);
  timer.unref();
  return {
    check,
    forget: (runId) => known.delete(runId),
    know: (runId) => known.set(runId, true),
    stop: () => clearInterval(timer),
  };
}
