/**
 * View preferences kept in localStorage (the theme, the sidebar). Storage may be off (a private window, a policy):
 * reading then gives null and writing does nothing, so a choice holds for the page only.
 */
const storage = (): { getItem(k: string): string | null; setItem(k: string, v: string): void; removeItem(k: string): void } | undefined =>
  (globalThis as unknown as { localStorage?: ReturnType<typeof storage> }).localStorage;

export function readPref(key: string): string | null {
  try {
    return storage()?.getItem(key) ?? null;
  } catch {
    return null;
  }
}

/** Stores `value`, or forgets the key for null. */
export function writePref(key: string, value: string | null): void {
  try {
    if (value === null) storage()?.removeItem(key);
    else storage()?.setItem(key, value);
  } catch {
    // storage off
  }
}
