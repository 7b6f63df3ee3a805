import { create } from 'zustand';

import { readPref, writePref } from './prefs.js';

/** 'system' follows the operating system's light or dark preference (prefers-color-scheme). */
export type ThemeChoice = 'system' | 'light' | 'dark';

const KEY = 'horizon-theme';

/** The browser globals this reads; typed here so Node-side tests type-check this file too. */
const g = globalThis as unknown as {
  document?: { documentElement: { dataset: { theme?: string } } };
  matchMedia?: (q: string) => DarkQuery;
};

function stored(): ThemeChoice {
  const v = readPref(KEY);
  return v === 'light' || v === 'dark' ? v : 'system';
}

/** The little of matchMedia this reads; typed here so Node-side tests type-check this file too. */
interface DarkQuery {
  readonly matches: boolean;
  addEventListener(type: 'change', listener: () => void): void;
  removeEventListener(type: 'change', listener: () => void): void;
}

const darkQuery = (): DarkQuery | undefined => g.matchMedia?.('(prefers-color-scheme: dark)');

let unfollow: (() => void) | undefined;

/**
 * Sets light or dark on <html data-theme>, where styles.css reads it: the choice, or for 'system' the system's
 * preference, followed as it changes.
 */
export function applyTheme(
  choice: ThemeChoice,
  root: { dataset: { theme?: string } } | undefined = g.document?.documentElement,
  query: DarkQuery | undefined = darkQuery(),
): void {
  unfollow?.();
  unfollow = undefined;
  if (!root) return;
  const set = () => {
    root.dataset.theme = choice === 'system' ? (query?.matches ? 'dark' : 'light') : choice;
  };
  set();
  if (choice === 'system' && query) {
    query.addEventListener('change', set);
    unfollow = () => query.removeEventListener('change', set);
  }
}

interface ThemeState {
  choice: ThemeChoice;
  choose(choice: ThemeChoice): void;
}

export const useTheme = create<ThemeState>((set) => ({
  choice: stored(),
  choose: (choice) => {
    writePref(KEY, choice === 'system' ? null : choice);
    applyTheme(choice);
    set({ choice });
  },
}));
