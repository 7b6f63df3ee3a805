import { create } from 'zustand';

/** 'system' follows the operating system's light or dark preference (prefers-color-scheme). */
export type ThemeChoice = 'system' | 'light' | 'dark';

const KEY = 'horizon-theme';

function stored(): ThemeChoice {
  try {
    const v = globalThis.localStorage?.getItem(KEY);
    return v === 'light' || v === 'dark' ? v : 'system';
  } catch {
    return 'system';
  }
}

/** Sets the choice on <html data-theme>, where styles.css reads it; 'system' leaves it to the media query. */
export function applyTheme(choice: ThemeChoice, root: { dataset: DOMStringMap } | undefined = globalThis.document?.documentElement): void {
  if (!root) return;
  if (choice === 'system') delete root.dataset.theme;
  else root.dataset.theme = choice;
}

interface ThemeState {
  choice: ThemeChoice;
  choose(choice: ThemeChoice): void;
}

export const useTheme = create<ThemeState>((set) => ({
  choice: stored(),
  choose: (choice) => {
    try {
      if (choice === 'system') globalThis.localStorage?.removeItem(KEY);
      else globalThis.localStorage?.setItem(KEY, choice);
    } catch {
      // Storage off: the choice holds for this page only.
    }
    applyTheme(choice);
    set({ choice });
  },
}));
