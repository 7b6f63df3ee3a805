import { spawnSync } from 'node:child_process';

import { describe, expect, it } from 'vitest';

import { loadNativeBinding, resolveAddonPath } from '../../electron/worker/runtime/binding.js';

/** The probe's kernel path in a fresh process whose environment caps it (the runtime reads HORIZON_CPU_ISA at start). */
function probedIsa(cap: string | undefined): string {
  const script = `process.stdout.write(require(${JSON.stringify(resolveAddonPath(process.env.HORIZON_NATIVE_ADDON))}).probeDevices().cpuIsa)`;
  const env = { ...process.env };
  if (cap === undefined) delete env.HORIZON_CPU_ISA;
  else env.HORIZON_CPU_ISA = cap;
  const r = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8', env });
  if (r.status !== 0) throw new Error(r.stderr);
  return r.stdout;
}

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

  it("reports the CPU backend's kernel path, HORIZON_CPU_ISA's cap included", () => {
    const names = ['scalar', 'avx2', 'avx-vnni', 'avx512-vnni'];
    expect(names).toContain(loadNativeBinding().probeDevices().cpuIsa);
    const best = probedIsa(undefined);
    expect(names).toContain(best);
    expect(probedIsa('scalar')).toBe('scalar');
    // A cap the CPU cannot run leaves the best path it has.
    expect(probedIsa('avx512-vnni')).toBe(best);
    expect(probedIsa('sse9')).toBe(best);
  });
});
