import { beforeAll, describe, expect, it, vi } from 'vitest';

import { EVENT_NAMES } from '../../../../electron/common/ipc-contract.js';
import { CHANNELS } from '../../../../electron/common/ipc-validators.js';

const exposed: Record<string, unknown> = {};
const invoked: { channel: string; payload: unknown }[] = [];
const subscribed = new Map<string, (...args: unknown[]) => void>();

vi.mock('electron', () => ({
  contextBridge: { exposeInMainWorld: (key: string, value: unknown) => (exposed[key] = value) },
  ipcRenderer: {
    invoke: async (channel: string, payload: unknown) => (invoked.push({ channel, payload }), { ok: true, value: null }),
    on: (event: string, l: (...args: unknown[]) => void) => subscribed.set(event, l),
    removeListener: (event: string) => subscribed.delete(event),
  },
}));

type Bridge = {
  invoke(channel: string, payload: unknown): Promise<unknown>;
  on(event: string, listener: (p: unknown) => void): () => void;
};

describe('preload', () => {
  let api: Bridge;
  beforeAll(async () => {
    await import('../../../../electron/preload/index.js');
    api = exposed.api as Bridge;
  });

  it('exposes only window.api with invoke and on', () => {
    expect(Object.keys(exposed)).toEqual(['api']);
    expect(Object.keys(api).sort()).toEqual(['invoke', 'on']);
  });

  it('forwards contract channels and refuses anything else', async () => {
    for (const c of CHANNELS) await api.invoke(c, { x: 1 });
    expect(invoked.map((i) => i.channel)).toEqual(CHANNELS);
    await expect(api.invoke('fs:readFile', '/etc/passwd')).rejects.toThrow(/not a contract channel/);
    await expect(api.invoke('runs:onDidProgress', {})).rejects.toThrow(/not a contract channel/);
    expect(invoked).toHaveLength(CHANNELS.length);
  });

  it('subscribes to contract events only, passing the payload without the IPC event', () => {
    const got: unknown[] = [];
    const off = api.on(EVENT_NAMES[0]!, (p) => got.push(p));
    subscribed.get(EVENT_NAMES[0]!)?.({ sender: 'ipc-event' }, { jobId: 'j' });
    expect(got).toEqual([{ jobId: 'j' }]);
    off();
    expect(subscribed.has(EVENT_NAMES[0]!)).toBe(false);
    expect(() => api.on('ipc:anything', () => {})).toThrow(/not a contract event/);
  });

  it('lets a window hear of a run deleted in another', () => {
    const got: unknown[] = [];
    const off = api.on('runs:onDidDelete', (p) => got.push(p));
    subscribed.get('runs:onDidDelete')?.({ sender: 'ipc-event' }, { runId: 'r1' });
    expect(got).toEqual([{ runId: 'r1' }]);
    off();
  });
});
