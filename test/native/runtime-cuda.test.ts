/**
 * The CUDA backend through the addon on a real device (the cases are in cuda-backend-suite.ts; the CUDA simulator
 * runs the same ones in runtime-cuda-sim.test.ts). Without a device only the clear-error case runs and the device
 * cases are skipped with the reason in their title.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { describe, expect, it } from 'vitest';

import { loadModel, packNative } from '../../electron/worker/runtime/binding.js';
import { makeTinyModel } from '../../scripts/make-tiny-model.js';
import { cudaState, describeCudaBackend } from './cuda-backend-suite.js';

const state = cudaState();

describe.skipIf(!state.runtime || state.device)(`cuda backend without a device (${state.reason})`, () => {
  it('refuses to load with a message that names CUDA', async () => {
    const root = mkdtempSync(join(tmpdir(), 'horizon-cuda-none-'));
    try {
      const tiny = await makeTinyModel(join(root, 'tiny'), { seed: 3 });
      await packNative({ src: tiny.dir, dst: join(root, 'int4'), threads: 2 });
      await expect(loadModel({ dir: join(root, 'int4'), weights: 'int4', backend: 'cuda' })).rejects.toThrow(/CUDA/);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});

describeCudaBackend(state.device ? 'cuda backend on a CUDA device' : `cuda backend (skipped: ${state.reason})`, state.device);
