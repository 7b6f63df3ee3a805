import type { Result } from '../../../electron/common/result.js';

/** The keys of a store's state that one request about the ZIP in its field keeps: on its way, its answer, its error. */
export interface ZipAskKeys<S> {
  readonly busy: keyof S;
  readonly value: keyof S;
  readonly error: keyof S;
}

/**
 * Asks the services about the ZIP whose path is in the store's field (`zipPath`), one request at a time; a reply for a
 * path no longer in the field is dropped (the store's setZipPath clears the three keys). True when an answer was shown.
 */
export async function askAboutZip<S extends { zipPath: string }, T>(
  get: () => S,
  set: (patch: Partial<S>) => void,
  keys: ZipAskKeys<S>,
  what: string,
  ask: (path: string) => Promise<Result<T>>,
): Promise<boolean> {
  const patch = (p: Record<string, unknown>) => set(p as Partial<S>);
  const path = get().zipPath.trim();
  if (get()[keys.busy]) return false;
  if (!path) {
    patch({ [keys.error]: `Enter the path of ${what}.`, [keys.value]: null });
    return false;
  }
  patch({ [keys.error]: null, [keys.value]: null, [keys.busy]: true });
  const r = await ask(path);
  if (get().zipPath.trim() !== path || !get()[keys.busy]) return false;
  patch(r.ok ? { [keys.value]: r.value, [keys.busy]: false } : { [keys.error]: r.error.message, [keys.busy]: false });
  return r.ok;
}
