/**
 * The CUDA backend's device cases (cuda-backend-suite.ts) through the addon built against the CUDA simulator, so a
 * machine without a GPU runs the CUDA path of the binding: the backend's kernels execute on the CPU, and nothing here
 * stands for GPU execution or speed. Skipped only when the simulator addon is not built (no nvcc).
 */
import { describe, expect, it } from 'vitest';

import { SIM_ADDON, SIM_DEVICE_NAME, simAddonMissing } from './cuda-sim-addon.js';

// The binding tries HORIZON_NATIVE_ADDON first and keeps the addon it loaded for the process (one per test file), so
// the variable is set before the binding is first imported and loaded, and restored once it is.
const previous = process.env.HORIZON_NATIVE_ADDON;
process.env.HORIZON_NATIVE_ADDON = SIM_ADDON;
const { loadNativeBinding } = await import('../../electron/worker/runtime/binding.js');
const { describeCudaBackend } = await import('./cuda-backend-suite.js');
if (!simAddonMissing) loadNativeBinding();
if (previous === undefined) delete process.env.HORIZON_NATIVE_ADDON;
else process.env.HORIZON_NATIVE_ADDON = previous;

describe.skipIf(simAddonMissing !== '')(
  `cuda backend on the CUDA simulator (CPU)${simAddonMissing ? ` (skipped: ${simAddonMissing})` : ''}`,
  () => {
    it('loaded the simulator addon, which reports its one simulated device', () => {
      const probe = loadNativeBinding().probeDevices();
      expect(probe.cudaCompiled).toBe(true);
      expect(probe.devices.map((d) => d.name)).toEqual([SIM_DEVICE_NAME]);
    });

    describeCudaBackend('the device cases of cuda-backend-suite.ts', true);
  },
);
