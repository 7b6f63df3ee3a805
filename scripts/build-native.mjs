#!/usr/bin/env node
// Builds native/ with cmake-js in Node-API mode (offline). CUDA is compiled when nvcc is found,
// or forced with --cuda; HORIZON_NO_CUDA=1 or --no-cuda forces the CPU-only build.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const args = process.argv.slice(2);

function findNvcc() {
  const candidates = [process.env.CUDACXX, '/usr/local/cuda/bin/nvcc'].filter(Boolean);
  for (const c of candidates) if (existsSync(c)) return c;
  const which = spawnSync(process.platform === 'win32' ? 'where' : 'which', ['nvcc'], { encoding: 'utf8' });
  if (which.status === 0) return which.stdout.split(/\r?\n/)[0].trim();
  return null;
}

const forceCuda = args.includes('--cuda');
const noCuda = args.includes('--no-cuda') || process.env.HORIZON_NO_CUDA === '1';
const nvcc = noCuda ? null : findNvcc();
if (forceCuda && !nvcc) {
  console.error('build-native: --cuda was given but nvcc was not found (set CUDACXX or add nvcc to PATH)');
  process.exit(1);
}
const cuda = !noCuda && (forceCuda || nvcc !== null);
const debug = args.includes('--debug');

const cmakeJs = path.join(root, 'node_modules', 'cmake-js', 'bin', 'cmake-js');
const cmd = [cmakeJs, 'compile', '-d', 'native', '-O', 'native/build', `--CDRT_CUDA=${cuda ? 'ON' : 'OFF'}`];
if (cuda) cmd.push(`--CDCMAKE_CUDA_COMPILER=${nvcc}`);
if (debug) cmd.push('--debug');
const jobs = process.env.CMAKE_BUILD_PARALLEL_LEVEL ?? '2';
console.log(`build-native: ${cuda ? `CUDA on (${nvcc})` : 'CPU only'}`);
try {
  execFileSync(process.execPath, cmd, {
    cwd: root,
    stdio: 'inherit',
    env: { ...process.env, CMAKE_BUILD_PARALLEL_LEVEL: jobs },
  });
} catch {
  console.error('build-native: the native build failed (see the compiler output above)');
  process.exit(1);
}
