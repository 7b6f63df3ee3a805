import type { DeviceProbe } from '../../common/worker-protocol.js';
import { loadNativeBinding } from './binding.js';
import type { InferenceEngine } from './inference-engine.js';

function driverString(v: number): string {
  // CUDA encodes the driver API version as 1000 * major + 10 * minor.
  return v > 0 ? `${Math.floor(v / 1000)}.${Math.floor((v % 1000) / 10)}` : 'unknown';
}

/** Reports the CUDA devices, or "CPU" with the reason when none is usable. */
export function probeNativeDevices(): DeviceProbe {
  const probe = loadNativeBinding().probeDevices();
  const devices = probe.devices.map((d) => ({
    index: d.index,
    name: d.name,
    vramBytes: d.totalMemoryBytes,
    freeVramBytes: d.freeMemoryBytes,
    driverVersion: driverString(d.driverVersion),
    computeCapability: d.computeCapability,
  }));
  const first = devices[0];
  return {
    label: first ? `CUDA: ${first.name}` : 'CPU',
    cudaCompiled: probe.cudaCompiled,
    devices,
    note: first ? '' : probe.error || (probe.cudaCompiled ? 'no CUDA device found' : 'built without CUDA'),
  };
}

/** The native addon behind the worker's engine interface. */
export function createNativeEngine(): InferenceEngine {
  return {
    probe: probeNativeDevices,
    async load({ modelDir }) {
      throw new Error(`${modelDir}: the native runtime in this build cannot load models yet (no loadModel in binding.ts)`);
    },
  };
}
