/** Test helper: a WorkerSpawner running the worker's message loop in this process over a given engine. */
import type { WorkerChannel, WorkerSpawner } from '../../../../electron/main/worker-client.js';
import type { InferenceEngine } from '../../../../electron/worker/runtime/inference-engine.js';
import { serveWorker } from '../../../../electron/worker/worker-server.js';

export interface InProcessWorkers {
  readonly spawner: WorkerSpawner;
  /** Simulates the current worker dying from a signal. */
  crash(signal?: string): void;
  readonly spawned: number;
}

export function inProcessWorkers(makeEngine: () => InferenceEngine): InProcessWorkers {
  let current: { die(signal: string): void } | undefined;
  let spawned = 0;
  const spawner: WorkerSpawner = () => {
    spawned++;
    let alive = true;
    const toWorker: ((m: unknown) => void)[] = [];
    const toMain: ((m: unknown) => void)[] = [];
    const exits: ((code: number | null, signal: string | null) => void)[] = [];
    const channel: WorkerChannel = {
      send: (m) => queueMicrotask(() => alive && toWorker.forEach((h) => h(structuredClone(m)))),
      onMessage: (h) => void toMain.push(h),
      onExit: (h) => void exits.push(h),
      kill: () => die('SIGTERM'),
    };
    const die = (signal: string): void => {
      if (!alive) return;
      alive = false;
      queueMicrotask(() => exits.forEach((h) => h(null, signal)));
    };
    current = { die };
    queueMicrotask(() =>
      serveWorker(
        {
          send: (m) => queueMicrotask(() => alive && toMain.forEach((h) => h(structuredClone(m)))),
          onMessage: (h) => void toWorker.push(h),
        },
        makeEngine(),
      ),
    );
    return channel;
  };
  return {
    spawner,
    crash: (signal = 'SIGKILL') => current?.die(signal),
    get spawned() {
      return spawned;
    },
  };
}
