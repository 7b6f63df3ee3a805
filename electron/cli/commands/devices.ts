import { loadNativeBinding } from '../../worker/runtime/binding.js';
import { driverString } from '../../worker/runtime/native-engine.js';
import { parseCommandArgs } from '../command-args.js';

export const summary = "list CUDA devices (the CPU backend is used when there is none) and the CPU backend's kernel path";

export async function run(args: string[]): Promise<number> {
  const parsed = parseCommandArgs('devices', 'usage: horizon devices', args, {});
  if (typeof parsed === 'number') return parsed;
  const probe = loadNativeBinding().probeDevices();
  if (probe.devices.length === 0) console.log(`backend: CPU (${probe.error || 'no CUDA device'})`);
  for (const d of probe.devices) {
    const gib = (d.totalMemoryBytes / 2 ** 30).toFixed(1);
    console.log(`cuda:${d.index} ${d.name} ${gib} GiB, compute ${d.computeCapability}, driver ${driverString(d.driverVersion)}`);
  }
  // What a CPU run (--backend cpu, or no device) computes with; HORIZON_CPU_ISA caps it.
  console.log(`cpu: ${probe.cpuIsa} kernels`);
  return 0;
}
