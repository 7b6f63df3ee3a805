import { create } from 'zustand';

import type { RunComparison, RunSummary, VerifyReport } from '../../../electron/common/ipc-contract.js';
import { call } from '../api.js';

interface HistoryState {
  runs: readonly RunSummary[];
  /** Up to two run ids, in the order they were picked (A then B). */
  selected: readonly string[];
  comparison: RunComparison | null;
  error: string | null;
  zipPath: string;
  verifyReport: VerifyReport | null;
  verifyError: string | null;
  verifying: boolean;
  refresh(): Promise<void>;
  setZipPath(path: string): void;
  /** Re-checks a result ZIP (hashes and re-scoring) by its path on the machine running the services. */
  verifyZip(): Promise<void>;
  toggle(runId: string): void;
  compare(): Promise<void>;
  clearComparison(): void;
}

export const useHistory = create<HistoryState>((set, get) => ({
  runs: [],
  selected: [],
  comparison: null,
  error: null,
  zipPath: '',
  verifyReport: null,
  verifyError: null,
  verifying: false,
  // A report is about the path it was asked for: it goes when the path changes, and so does a late reply.
  setZipPath: (zipPath) => set({ zipPath, verifyReport: null, verifyError: null, verifying: false }),
  verifyZip: async () => {
    const path = get().zipPath.trim();
    if (get().verifying) return;
    if (!path) {
      set({ verifyError: 'Enter the path of a result ZIP.', verifyReport: null });
      return;
    }
    set({ verifyError: null, verifyReport: null, verifying: true });
    const r = await call('export:verify', { path });
    if (get().zipPath.trim() !== path || !get().verifying) return;
    set(r.ok ? { verifyReport: r.value, verifying: false } : { verifyError: r.error.message, verifying: false });
  },
  refresh: async () => {
    const r = await call('runs:list', undefined);
    set(r.ok ? { runs: r.value, error: null } : { error: r.error.message });
  },
  toggle: (runId) => {
    const sel = get().selected;
    // A comparison shown is of the runs it was asked for: it goes when the choice changes.
    if (sel.includes(runId)) set({ selected: sel.filter((id) => id !== runId), comparison: null });
    else set({ selected: [...sel, runId].slice(-2), comparison: null });
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
