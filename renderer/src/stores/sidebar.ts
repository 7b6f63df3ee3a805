import { create } from 'zustand';

const KEY = 'horizon-sidebar';

/** Below this window width the sidebar starts as a rail of icons, unless the user opened it. */
export const NARROW_WINDOW_PX = 1100;

function initial(): boolean {
  try {
    const v = globalThis.localStorage?.getItem(KEY);
    if (v === 'collapsed') return true;
    if (v === 'open') return false;
  } catch {
    // Storage off: by the window's width.
  }
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
    try {
      globalThis.localStorage?.setItem(KEY, collapsed ? 'collapsed' : 'open');
    } catch {
      // The choice holds for this page only.
    }
    set({ collapsed });
  },
}));
