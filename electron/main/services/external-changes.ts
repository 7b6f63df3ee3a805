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

/** A table whose rows another process may delete, import or label, and the events that tell of each. */
interface Watched {
  readonly table: 'runs' | 'perf_campaigns';
  readonly deleted: 'runs:onDidDelete' | 'perf:onDidDelete';
  readonly imported: 'runs:onDidImport' | 'perf:onDidImport';
  readonly labelled: 'runs:onDidLabel' | 'perf:onDidLabel';
  readonly key: 'runId' | 'campaignId';
}

const WATCHED: readonly Watched[] = [
  { table: 'runs', deleted: 'runs:onDidDelete', imported: 'runs:onDidImport', labelled: 'runs:onDidLabel', key: 'runId' },
  { table: 'perf_campaigns', deleted: 'perf:onDidDelete', imported: 'perf:onDidImport', labelled: 'perf:onDidLabel', key: 'campaignId' },
];

interface Known {
  readonly imported: boolean;
  /** Undefined for a row this process announced before reading it: its label is learnt, not announced. */
  readonly label: string | null | undefined;
}

/**
 * Announces the runs and campaigns another process deleted from the database the app has open (`runs:onDidDelete`,
 * `perf:onDidDelete`), those it imported (`runs:onDidImport`, `perf:onDidImport`) and those it labelled
 * (`runs:onDidLabel`, `perf:onDidLabel`): `horizon delete`, `horizon import` and `horizon label` may change them while
 * the app holds the data folder. SQLite's data_version changes only when another connection commits, so the rows are
 * compared only then; between such commits they are re-read to learn what this process changed.
 */
export function watchExternalChanges(db: Database.Database, emit: EmitEvent, intervalMs = EXTERNAL_CHECK_MS): ExternalChanges {
  const version = db.prepare('PRAGMA data_version').pluck();
  const watched = WATCHED.map((w) => {
    const ids = db.prepare(`SELECT id, imported_at IS NOT NULL AS imported, label FROM ${w.table}`);
    const read = () =>
      new Map<string, Known>((ids.all() as { id: string; imported: number; label: string | null }[]).map((r) => [r.id, { imported: r.imported === 1, label: r.label }]));
    return { ...w, read, known: read() };
  });
  const say = (event: Watched['deleted'] | Watched['imported'] | Watched['labelled'], key: Watched['key'], id: string, more?: object) =>
    (emit as (e: string, p: unknown) => void)(event, { [key]: id, ...more });
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
        for (const [id, row] of current) {
          const before = w.known.get(id);
          if (row.imported && !before) say(w.imported, w.key, id);
          if (before && before.label !== undefined && before.label !== row.label) say(w.labelled, w.key, id, { label: row.label ?? null });
        }
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
        if (event === w.imported) w.known.set(id, { imported: true, label: undefined });
        if (event === w.labelled) {
          const before = w.known.get(id);
          if (before) w.known.set(id, { ...before, label: (payload as EventMap[Watched['labelled']]).label });
        }
      }
    },
    stop: () => clearInterval(timer),
  };
}
