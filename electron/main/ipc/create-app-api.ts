import type { Api, EmitEvent } from '../../common/ipc-contract.js';
import { createServices, type ServicesOptions } from '../services/create-services.js';
import type { WorkerSpawner } from '../worker-client.js';

export const DEFAULT_HUB_URL = 'https://huggingface.co';

export interface AppApiOptions {
  readonly dataDir: string;
  /** Hugging Face Hub base URL; the public hub when omitted. */
  readonly hubUrl?: string;
  readonly spawner: WorkerSpawner;
  /** Where services publish events (IPC fan-out in Electron, the WebSocket in `horizon serve`). */
  readonly emit: EmitEvent;
  readonly appVersion: string;
  /** The desktop shell's native file dialog; `horizon serve` has none and the UI asks for typed paths. */
  readonly pickPath?: ServicesOptions['pickPath'];
  /** How preparation starts the INT4 packer (the desktop shell: a utilityProcess). */
  readonly packer?: ServicesOptions['packer'];
}

export interface AppApi {
  readonly api: Api;
  /** Stops jobs and the worker, closes the database. */
  dispose(): Promise<void>;
}

/** The engine's services (electron/main/services) for one data dir; shared by Electron and `horizon serve`. */
export async function createAppApi(opts: AppApiOptions): Promise<AppApi> {
  const services = createServices({
    dataDir: opts.dataDir,
    hubUrl: opts.hubUrl ?? DEFAULT_HUB_URL,
    spawner: opts.spawner,
    emit: opts.emit,
    appVersion: opts.appVersion,
    ...(opts.pickPath ? { pickPath: opts.pickPath } : {}),
    ...(opts.packer ? { packer: opts.packer } : {}),
  });
  return { api: services.api, dispose: () => services.dispose() };
}
