import { create } from 'zustand';

import type { RunComparison, RunSummary } from '../../../electron/common/ipc-contract.js';
import { call } from '../api.js';

interface HistoryState {
  runs: readonly RunSummary[];
  /** Up to two run ids, in the order they were picked (A then B). */
  selected: readonly string[];
  comparison: RunComparison | null;
  error: string | null;
  refresh(): Promise<void>;
  toggle(runId: string): void;
  compare(): Promise<void>;
  clearComparison(): void;
}

export const useHistory = create<HistoryState>((set, get) => ({
  runs: [],
  selected: [],
  comparison: null,
  error: null,
  refresh: async () => {
    const r = await call('runs:list', undefined);
    set(r.ok ? { runs: r.value, error: null } : { error: r.error.message });
  },
  toggle: (runId) => {
    const sel = get().selected;
    if (sel.includes(runId)) set({ selected: sel.filter((id) => id !== runId) });
    else set({ selected: [...sel, runId].slice(-2) });
  },
  compare: async () => {
    const [runA, runB] = get().selected;
    if (!runA || !runB) {
      set({ error: 'Pick two runs to compare.' });
      return;
    }
    const r = await call('runs:compare', { runA, runB });
    set(r.ok ? { comparison: r.value, error: null } : { error: r.error.message });
  },
  clearComparison: () => set({ comparison: null }),
}));
