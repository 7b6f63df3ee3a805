import { create } from 'zustand';

import type { SystemInfo } from '../../../electron/common/ipc-contract.js';
import { call } from '../api.js';

interface SystemState {
  info: SystemInfo | null;
  loading: boolean;
  error: string | null;
  refresh(): Promise<void>;
}

export const useSystem = create<SystemState>((set) => ({
  info: null,
  loading: false,
  error: null,
  refresh: async () => {
    set({ loading: true, error: null });
    const r = await call('system:check', undefined);
    set(r.ok ? { info: r.value, loading: false } : { error: r.error.message, loading: false });
  },
}));
