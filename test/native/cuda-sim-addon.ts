/**
 * Where the build puts the addon linked against the CUDA simulator (native/tests/cuda-sim), a test tool that is never
 * packaged. It exists when the native build had the CUDA backend on Linux or macOS (GCC or Clang).
 */
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';

export const SIM_ADDON = join(resolve(import.meta.dirname, '..', '..'), 'native', 'build', 'Release', 'horizon_runtime_sim.node');

/** The one device the simulator reports (tests/cuda-sim/cuda-sim.cpp). */
export const SIM_DEVICE_NAME = 'CUDA simulator on the CPU';

/** Empty when the simulator addon is built, else why the tests that need it are skipped. */
export const simAddonMissing = existsSync(SIM_ADDON)
  ? ''
  : `${SIM_ADDON} is not built: npm run build:native builds it when nvcc is found (CUDA backend, GCC or Clang)`;
