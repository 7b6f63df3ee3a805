#!/usr/bin/env node
// Compiles the main-process, worker and CLI TypeScript into out/ (what scripts/horizon.mjs starts from), as part of
// npm install. Without TypeScript (an install without dev dependencies) it says so and leaves the CLI on the sources.
import { execFileSync } from 'node:child_process';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
let tsc;
try {
  tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
} catch {
  console.log('build-cli: TypeScript is not installed; horizon runs from the sources');
  process.exit(0);
}
execFileSync(process.execPath, [tsc, '-p', 'tsconfig.electron.json'], { cwd: root, stdio: 'inherit' });
execFileSync(process.execPath, [path.join(root, 'scripts', 'copy-build-assets.mjs')], { cwd: root, stdio: 'inherit' });
console.log('build-cli: compiled into out/ (horizon starts from it while no source is newer)');
