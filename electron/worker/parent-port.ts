import type { WorkerMessage } from '../common/worker-protocol.js';
import type { WorkerPort } from './worker-server.js';

interface ElectronParentPort {
  on(event: 'message', listener: (e: { data: unknown }) => void): void;
  postMessage(message: unknown): void;
}

/** The channel to main: `process.parentPort` under Electron's utilityProcess, the fork IPC channel under Node. */
export function connectParent(): WorkerPort {
  const parentPort = (process as unknown as { parentPort?: ElectronParentPort }).parentPort;
  if (parentPort) {
    return {
      send: (m: WorkerMessage) => parentPort.postMessage(m),
      onMessage: (h) => parentPort.on('message', (e) => h(e.data)),
    };
  }
  if (!process.send) throw new Error('electron/worker: started without an IPC channel (use fork or utilityProcess)');
  process.on('disconnect', () => process.exit(0));
  // Ctrl-C reaches the whole process group; the parent turns it into a cancel, and this process ends on disconnect.
  process.on('SIGINT', () => undefined);
  return {
    send: (m: WorkerMessage) => void process.send?.(m),
    onMessage: (h) => process.on('message', h),
  };
}
