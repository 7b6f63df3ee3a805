#!/usr/bin/env node
// Runs the native ctest suite from native/build. CPU tests by default; --gpu runs the "gpu" label,
// which needs a CUDA device and an addon built with CUDA.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const buildDir = path.join(root, 'native', 'build');
const gpu = process.argv.includes('--gpu');
if (!existsSync(path.join(buildDir, 'CTestTestfile.cmake'))) {
  console.error('test-native: native/build has no ctest files; run `npm run build:native` first');
  process.exit(1);
}
const build = spawnSync('cmake', ['--build', buildDir, '--config', 'Release', '--parallel', '2'], { stdio: 'inherit' });
if (build.status !== 0) process.exit(build.status ?? 1);
const args = ['--test-dir', buildDir, '--output-on-failure', '--no-tests=error', '--parallel', '2', '-L', gpu ? 'gpu' : 'cpu'];
const res = spawnSync('ctest', args, { stdio: 'inherit' });
process.exit(res.status ?? 1);
