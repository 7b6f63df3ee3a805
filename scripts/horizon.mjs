#!/usr/bin/env node
// The `horizon` CLI. It starts from the compiled JavaScript in out/ (npm install and npm run build write it) when
// that is at least as new as every TypeScript source, and otherwise runs the sources through tsx, so an edited source
// never runs stale and a fresh checkout needs no build step (scripts/cli-entry.mjs decides).
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

import { chooseCliEntry } from './cli-entry.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
if (chooseCliEntry(root) === 'built') {
  await import(pathToFileURL(path.join(root, 'out', 'electron', 'cli', 'bin.js')).href);
} else {
  const { register } = await import('tsx/esm/api');
  register();
  const { endQuietlyOnClosedStdout, main } = await import('../electron/cli/index.ts');
  endQuietlyOnClosedStdout();
  process.exitCode = await main(process.argv.slice(2));
}
