/**
 * native/CMakeLists.txt's choice of CUDA architectures (configure only, no build): its own list where the user gave
 * none, and the user's list kept, whether given with -DCMAKE_CUDA_ARCHITECTURES or the CUDAARCHS environment variable.
 * Needs cmake and nvcc; skipped without them.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { afterAll, describe, expect, it } from 'vitest';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const has = (tool: string): boolean => spawnSync(tool, ['--version'], { stdio: 'ignore' }).status === 0;
const tmp = mkdtempSync(path.join(os.tmpdir(), 'horizon-cmake-archs-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

/** Configures native/ into `build` and returns the cached CMAKE_CUDA_ARCHITECTURES. */
function configure(build: string, args: readonly string[], env: NodeJS.ProcessEnv = {}): string {
  const baseEnv = { ...process.env };
  delete baseEnv.CUDAARCHS;
  const r = spawnSync('cmake', ['-S', path.join(root, 'native'), '-B', build, '-DRT_CUDA=ON', '-DRT_ADDON=OFF', ...args], {
    env: { ...baseEnv, ...env },
    encoding: 'utf8',
  });
  expect(r.status, r.stderr).toBe(0);
  const line = /^CMAKE_CUDA_ARCHITECTURES:[A-Z]+=(.*)$/m.exec(readFileSync(path.join(build, 'CMakeCache.txt'), 'utf8'));
  return line?.[1] ?? '';
}

describe.skipIf(!has('cmake') || !has('nvcc'))('native/CMakeLists.txt CUDA architectures', () => {
  it('chooses its list when none is given, and keeps a list given on a later configure', () => {
    const build = path.join(tmp, 'default');
    const chosen = configure(build, []);
    expect(chosen).toMatch(/^75;80-real;86-real;89-real;90/);
    expect(configure(build, [])).toBe(chosen);
    expect(configure(build, ['-DCMAKE_CUDA_ARCHITECTURES=86-real'])).toBe('86-real');
    expect(configure(build, [])).toBe('86-real');
  });

  it('keeps the list the CUDAARCHS environment variable gives', () => {
    expect(configure(path.join(tmp, 'env'), [], { CUDAARCHS: '86-real' })).toBe('86-real');
  });
});
