import type { RunBackend } from '../../common/ipc-contract.js';

/**
 * How the UI names a run's backend (`RunSummary.backendLabel`, `RunProgress.backendLabel`) from the run's stored
 * `backend` and `deviceLabel`: "pending" until its model is first loaded.
 */
export function backendLabel(backend: RunBackend, deviceLabel: string): string {
  return backend === 'cpu' ? 'CPU backend' : backend === 'pending' ? 'loading the model…' : `CUDA: ${deviceLabel}`;
}
