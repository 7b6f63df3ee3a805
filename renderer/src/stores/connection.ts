import { create } from 'zustand';

interface ConnectionState {
  /** False while the services cannot be reached (`horizon serve` stopped or restarting). */
  up: boolean;
  /** When it was lost (Date.now()), for "since …"; null while up. */
  lostAt: number | null;
  set(up: boolean, now?: number): void;
}

export const useConnection = create<ConnectionState>((set, get) => ({
  up: true,
  lostAt: null,
  set: (up, now = Date.now()) => {
    if (up === get().up) return;
    set({ up, lostAt: up ? null : now });
  },
}));
