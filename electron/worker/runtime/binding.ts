/**
 * The only module that loads the native addon. Everything native is typed here.
 */
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** A CUDA device as reported by the driver. */
export interface NativeDeviceInfo {
  readonly index: number;
  readonly name: string;
  readonly totalMemoryBytes: number;
  readonly freeMemoryBytes: number;
  readonly computeCapability: string;
  readonly driverVersion: number;
}

/** The outcome of probing for CUDA; `devices` is empty on a machine without a usable GPU. */
export interface NativeDeviceProbe {
  readonly cudaCompiled: boolean;
  readonly error: string;
  readonly devices: readonly NativeDeviceInfo[];
}

export interface NativeBinding {
  readonly abiVersion: number;
  probeDevices(): NativeDeviceProbe;
}

const here = path.dirname(fileURLToPath(import.meta.url));

/** Candidate locations: the source tree's build and an unpacked asar in a packaged app. */
function addonCandidates(): string[] {
  const env = process.env.HORIZON_NATIVE_ADDON;
  const fromRoot = (root: string) => path.join(root, 'native', 'build', 'Release', 'horizon_runtime.node');
  const list = [
    fromRoot(path.resolve(here, '..', '..', '..')),
    fromRoot(path.resolve(here, '..', '..', '..', '..')),
  ].map((p) => p.replace(`app.asar${path.sep}`, `app.asar.unpacked${path.sep}`));
  return env ? [env, ...list] : list;
}

let cached: NativeBinding | undefined;

export function loadNativeBinding(): NativeBinding {
  if (cached) return cached;
  const candidates = addonCandidates();
  const found = candidates.find((p) => existsSync(p));
  if (!found) {
    throw new Error(`the native runtime is not built (looked for ${candidates.join(', ')}); run 'npm run build:native'`);
  }
  const require = createRequire(import.meta.url);
  cached = require(found) as NativeBinding;
  return cached;
}
