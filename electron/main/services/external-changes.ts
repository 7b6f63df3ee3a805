import type Database from 'better-sqlite3';

import type { EmitEvent, EventMap, EventName } from '../../common/ipc-contract.js';

/** How often the database is asked whether another process changed it. */
export const EXTERNAL_CHECK_MS = 2_000;

export interface ExternalChanges {
  /** Compares now (the timer calls it; tests call it directly). */
  check(): void;
  /** An event this process announced itself: the change it tells of is not announced again. */
  noted<E extends EventName>(event: E, payload: EventMap[E]): void;
  stop(): void;
}

/** A table whose rows another process may delete or import, and the events that tell of each. */
interface Watched {
  readonly table: 'runs' | 'perf_campaigns';
  readonly deleted: 'runs:onDidDelete' | 'perf:onDidDelete';
  readonly imported: 'runs:onDidImport' | 'perf:onDidImport';
  readonly key: 'runId' | 'campaignId';
}

const WATCHED: readonly Watched[] = [
  { table: 'runs', deleted: 'runs:onDidDelete', imported: 'runs:onDidImport', key: 'runId' },
  { table: 'perf_campaigns', deleted: 'perf:onDidDelete', imported: 'perf:onDidImport', key: 'campaignId' },
];

/**
 * Announces the runs and campaigns another process deleted from the database the app has open (`runs:onDidDelete`,
 * `perf:onDidDelete`), and those it imported (`runs:onDidImport`, `perf:onDidImport`): `horizon delete` and `horizon
 * import` may change them while the app holds the data folder. SQLite's data_version changes only when another
 * connection commits, so the ids are compared only then; between such commits they are re-read to learn what this
 * process added.
 */
export function watchExternalChanges(db: Database.Database, emit: EmitEvent, intervalMs = EXTERNAL_CHECK_MS): ExternalChanges {
  const version = db.prepare('PRAGMA data_version').pluck();
  const watched = WATCHED.map((w) => {
    const ids = db.prepare(`SELECT id, imported_at IS NOT NULL AS imported FROM ${w.table}`);
    const read = () => new Map((ids.all() as { id: string; imported: number }[]).map((r) => [r.id, r.imported === 1]));
    return { ...w, read, known: read() };
  });
  const say = (event: Watched['deleted'] | Watched['imported'], key: Watched['key'], id: string) =>
    (emit as (e: string, p: unknown) => void)(event, { [key]: id });
  let seen = version.get() as number;
  const check = () => {
    if (!db.open) return;
    const now = version.get() as number;
    const changed = now !== seen;
    seen = now;
    for (const w of watched) {
      const current = w.read();
      if (changed) {
        for (const id of w.known.keys()) if (!current.has(id)) say(w.deleted, w.key, id);
        for (const [id, imported] of current) if (imported && !w.known.has(id)) say(w.imported, w.key, id);
      }
      w.known = current;
    }
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
    noted: (event, payload) => {
      for (const w of watched) {
        const id = (payload as unknown as Record<string, unknown>)[w.key];
        if (typeof id !== 'string') continue;
        if (event === w.deleted) w.known.delete(id);
        if (event === w.imported) w.known.set(id, true);
      }
    },
    stop: () => clearInterval(timer),
  };
}
