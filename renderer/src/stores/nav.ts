import { create } from 'zustand';

export type Page = 'system' | 'models' | 'run' | 'results' | 'history' | 'perf';

export const PAGES: readonly { id: Page; label: string }[] = [
  { id: 'system', label: 'System' },
  { id: 'models', label: 'Models' },
  { id: 'run', label: 'Run' },
  { id: 'results', label: 'Results' },
  { id: 'history', label: 'History' },
  { id: 'perf', label: 'Performance' },
];

interface NavState {
  page: Page;
  go(page: Page): void;
}

export const useNav = create<NavState>((set) => ({
  page: 'system',
  go: (page) => set({ page }),
}));
