import { create } from 'zustand';

import { readPref, writePref } from './prefs.js';

const KEY = 'horizon-sidebar';

/** Below this window width the sidebar starts as a rail of icons, unless the user opened it. */
export const NARROW_WINDOW_PX = 1100;

function initial(): boolean {
  const v = readPref(KEY);
  if (v === 'collapsed') return true;
  if (v === 'open') return false;
  return (globalThis.innerWidth ?? Infinity) < NARROW_WINDOW_PX;
}

interface SidebarState {
  collapsed: boolean;
  toggle(): void;
}

export const useSidebar = create<SidebarState>((set, get) => ({
  collapsed: initial(),
  toggle: () => {
    const collapsed = !get().collapsed;
    writePref(KEY, collapsed ? 'collapsed' : 'open');
    set({ collapsed });
  },
}));
