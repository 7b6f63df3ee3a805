import type { IpcMain, IpcMainInvokeEvent, WebContents } from 'electron';

import type { Api, EmitEvent } from '../../common/ipc-contract.js';
import { CHANNELS } from '../../common/ipc-validators.js';
import { err } from '../../common/result.js';
import { dispatchRequest } from './dispatch-request.js';

/** Decides whether a request comes from our own renderer (its top frame URL). */
export type SenderCheck = (senderUrl: string) => boolean;

/** Registers one validated handler per contract channel; returns a function that removes them. */
export function registerIpc(ipcMain: IpcMain, api: Api, isTrustedSender: SenderCheck): () => void {
  for (const channel of CHANNELS) {
    ipcMain.handle(channel, (event: IpcMainInvokeEvent, payload: unknown) => {
      const frame = event.senderFrame;
      const url = frame?.url ?? '';
      // Only the window's top frame speaks for the app: a subframe (however it got there) is refused whatever its URL.
      if (!frame || frame.parent !== null) return err('PERMISSION', `${channel}: request from a subframe (${url})`);
      if (!isTrustedSender(url)) return err('PERMISSION', `${channel}: request from an untrusted frame (${url})`);
      return dispatchRequest(api, channel, payload);
    });
  }
  return () => {
    for (const channel of CHANNELS) ipcMain.removeHandler(channel);
  };
}

/** Builds the services' event sink: each event goes to every live window that subscribed. */
export function createEventFanout(targets: () => readonly WebContents[]): EmitEvent {
  return (event, payload) => {
    for (const wc of targets()) if (!wc.isDestroyed()) wc.send(event, payload);
  };
}
