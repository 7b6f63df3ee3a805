#!/usr/bin/env node
// Data files that compiled modules read next to themselves: tsc emits only .js, so copy them into out/.
import { cpSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const ASSETS = ['evals/ifeval/text/langdetect/langdetect-data.json.gz'];
for (const rel of ASSETS) {
  const dest = path.join(root, 'out', rel);
  mkdirSync(path.dirname(dest), { recursive: true });
  cpSync(path.join(root, rel), dest);
}
console.log(`copy-build-assets: ${ASSETS.length} file(s) into out/`);
