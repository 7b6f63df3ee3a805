import type { Api, EmitEvent } from '../../common/ipc-contract.js';
import { err } from '../../common/result.js';
import type { WorkerSpawner } from '../worker-client.js';

export interface AppApiOptions {
  readonly dataDir: string;
  /** Hugging Face Hub base URL; the public hub when omitted. */
  readonly hubUrl?: string;
  readonly spawner: WorkerSpawner;
  /** Where services publish events (IPC fan-out in Electron, the WebSocket in `horizon serve`). */
  readonly emit: EmitEvent;
  readonly appVersion: string;
}

export interface AppApi {
  readonly api: Api;
  /** Stops jobs and the worker, closes the database. */
  dispose(): Promise<void>;
}

/** Composes the engine's services (electron/main/services) for one data dir; shared by Electron and `horizon serve`. */
export async function createAppApi(_opts: AppApiOptions): Promise<AppApi> {
  // TODO(ui): replace with the engine's services once electron/main/services lands.
  const missing = async () => err('INTERNAL', 'the engine services are not part of this build yet');
  const api: Api = {
    system: { check: missing },
    models: { list: missing, prepare: missing, cancel: missing, downloadAssets: missing, importAssets: missing },
    runs: {
      start: missing,
      cancel: missing,
      resume: missing,
      list: missing,
      get: missing,
      response: missing,
      responses: missing,
      compare: missing,
    },
    export: { exportRun: missing, verify: missing },
  };
  return { api, dispose: async () => {} };
}
