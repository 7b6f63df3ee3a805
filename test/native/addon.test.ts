import { describe, expect, it } from 'vitest';

import { loadNativeBinding } from '../../electron/worker/runtime/binding.js';

describe('native addon', () => {
  it('loads and reports devices or a reason for having none', () => {
    const binding = loadNativeBinding();
    const probe = binding.probeDevices();
    expect(typeof probe.cudaCompiled).toBe('boolean');
    if (probe.devices.length === 0) expect(probe.error).toMatch(/CUDA/);
    for (const d of probe.devices) {
      expect(d.name.length).toBeGreaterThan(0);
      expect(d.totalMemoryBytes).toBeGreaterThan(0);
      expect(d.computeCapability).toMatch(/^\d+\.\d+$/);
    }
  });
});
