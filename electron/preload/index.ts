/**
 * The preload: exposes `window.api` with exactly the contract's channels and events, nothing else. Bundled to
 * CommonJS (out/preload/index.cjs) because sandboxed preloads cannot load other files.
 */
import { contextBridge, ipcRenderer, type IpcRendererEvent } from 'electron';

import { EVENT_NAMES } from '../common/ipc-contract.js';
import { CHANNELS } from '../common/ipc-validators.js';

const channels = new Set<string>(CHANNELS);
const events = new Set<string>(EVENT_NAMES);

contextBridge.exposeInMainWorld('api', {
  invoke: (channel: string, payload: unknown): Promise<unknown> => {
    if (typeof channel !== 'string' || !channels.has(channel)) {
      return Promise.reject(new Error(`preload: '${String(channel)}' is not a contract channel`));
    }
    return ipcRenderer.invoke(channel, payload);
  },
  on: (event: string, listener: (payload: unknown) => void): (() => void) => {
    if (typeof event !== 'string' || !events.has(event)) throw new Error(`preload: '${String(event)}' is not a contract event`);
    if (typeof listener !== 'function') throw new Error(`preload: the listener for '${event}' is not a function`);
    const wrapped = (_e: IpcRendererEvent, payload: unknown) => listener(payload);
    ipcRenderer.on(event, wrapped);
    return () => {
      ipcRenderer.removeListener(event, wrapped);
    };
  },
});
