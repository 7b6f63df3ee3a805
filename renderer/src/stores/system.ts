import { create } from 'zustand';

import type { AssetKind, AssetStatus, PickPathRequest, SystemInfo } from '../../../electron/common/ipc-contract.js';
import { call } from '../api.js';

interface SystemState {
  info: SystemInfo | null;
  loading: boolean;
  error: string | null;
  refresh(): Promise<void>;
  /** Records an asset's state as a service just reported it (an import), ahead of the next full check. */
  applyAsset(status: AssetStatus): void;
  /** The desktop app's file dialog: the chosen path, or null when cancelled or unavailable (then `error` says why). */
  pickPath(req: PickPathRequest): Promise<string | null>;
}

/**
 * Checks are slow (the device probe), so their replies can land out of order or after an import changed an asset.
 * `tick` orders refreshes and applied assets: a reply older than the latest refresh is dropped, and an asset applied
 * after a check started wins over that check's (older) view of it.
 */
let tick = 0;
let latestRefresh = 0;
const applied = new Map<AssetKind, { status: AssetStatus; at: number }>();

function withAssets(info: SystemInfo, statuses: readonly AssetStatus[]): SystemInfo {
  let assets = info.assets;
  for (const s of statuses) {
    assets = assets.some((a) => a.kind === s.kind) ? assets.map((a) => (a.kind === s.kind ? s : a)) : [...assets, s];
  }
  return { ...info, assets };
}

export const useSystem = create<SystemState>((set, get) => ({
  info: null,
  loading: false,
  error: null,
  refresh: async () => {
    const mine = ++tick;
    latestRefresh = mine;
    set({ loading: true, error: null });
    const r = await call('system:check', undefined);
    if (mine !== latestRefresh) return;
    if (!r.ok) {
      set({ error: r.error.message, loading: false });
      return;
    }
    const newer = [...applied.values()].filter((a) => a.at > mine).map((a) => a.status);
    set({ info: withAssets(r.value, newer), loading: false });
  },
  pickPath: async (req) => {
    const r = await call('system:pickPath', req);
    if (!r.ok) {
      set({ error: r.error.message });
      return null;
    }
    return r.value.path;
  },
  applyAsset: (status) => {
    applied.set(status.kind, { status, at: ++tick });
    const info = get().info;
    if (info) set({ info: withAssets(info, [status]) });
  },
}));
