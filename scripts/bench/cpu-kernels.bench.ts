/**
 * The CPU kernels beside this core's ceilings, one thread (native/tests/bench-cpu-kernels.cpp): independent FP32 FMAs
 * 8- and 16-wide and 8-bit dot products, then the INT4 x 8-bit row kernel on every path the CPU has (1 to 8 tokens),
 * the dense FP16 panels at 1 / 16 / 128 tokens and the LM head with and without its screen, in multiply-adds a second
 * or milliseconds, decode attention, and the INT4 packer's scale search (scalar and AVX2). Asserts nothing. Needs the native build (npm run build:native).
 */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const EXE = join(resolve(import.meta.dirname, '..', '..'), 'native', 'build', process.platform === 'win32' ? 'bench-cpu-kernels.exe' : 'bench-cpu-kernels');

export async function bench(): Promise<void> {
  if (!existsSync(EXE)) throw new Error(`${EXE} is not built (npm run build:native)`);
  process.stdout.write(execFileSync(EXE, { encoding: 'utf8', timeout: 600_000 }));
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await bench();
