import { afterEach, describe, expect, it, vi } from 'vitest';

import type { NativeDeviceProbe } from '../../../../../electron/worker/runtime/binding.js';
import { run } from '../../../../../electron/cli/commands/devices.js';
import { captureConsole } from '../capture-console.js';

const addon = vi.hoisted(() => ({ probe: { cudaCompiled: false, error: '', devices: [], cpuIsa: 'avx2' } as NativeDeviceProbe }));
vi.mock('../../../../../electron/worker/runtime/binding.js', () => ({ loadNativeBinding: () => ({ probeDevices: () => addon.probe }) }));

afterEach(() => {
  addon.probe = { cudaCompiled: false, error: '', devices: [], cpuIsa: 'avx2' };
});

describe('horizon devices', () => {
  it('lists each CUDA device with its memory, compute capability and driver', async () => {
    addon.probe = {
      cudaCompiled: true,
      error: '',
      cpuIsa: 'avx2',
      devices: [
        { index: 0, name: 'NVIDIA H200', totalMemoryBytes: 139.8 * 2 ** 30, freeMemoryBytes: 2 ** 30, computeCapability: '9.0', driverVersion: 12080 },
        { index: 1, name: 'RTX 4090', totalMemoryBytes: 24 * 2 ** 30, freeMemoryBytes: 2 ** 30, computeCapability: '8.9', driverVersion: 12080 },
      ],
    };
    const r = await captureConsole(() => run([]));
    expect(r).toMatchObject({ code: 0, errOut: '' });
    const lines = r.out.split('\n');
    expect(lines).toHaveLength(3);
    // The driver as the app shows it (CUDA's 1000 * major + 10 * minor written out).
    expect(lines).toEqual([
      'cuda:0 NVIDIA H200 139.8 GiB, compute 9.0, driver 12.8',
      'cuda:1 RTX 4090 24.0 GiB, compute 8.9, driver 12.8',
      'cpu: avx2 kernels',
    ]);
  });

  it.each([
    ['cudaGetDeviceCount: no CUDA-capable device is detected', 'backend: CPU (cudaGetDeviceCount: no CUDA-capable device is detected)'],
    ['', 'backend: CPU (no CUDA device)'],
  ])('says the CPU backend is used, and why: %j', async (error, line) => {
    addon.probe = { cudaCompiled: true, error, devices: [], cpuIsa: 'avx512-vnni' };
    expect(await captureConsole(() => run([]))).toEqual({ code: 0, out: `${line}\ncpu: avx512-vnni kernels`, errOut: '' });
  });
});
