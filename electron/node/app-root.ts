import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const APP_NAME = 'horizon-runmap';

function readPackage(dir: string): { name?: unknown; version?: unknown } | undefined {
  try {
    return JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8')) as { name?: unknown; version?: unknown };
  } catch {
    return undefined;
  }
}

function findRepoRoot(start: string): string {
  for (let dir = start; ; dir = path.dirname(dir)) {
    if (readPackage(dir)?.name === APP_NAME) return dir;
    if (path.dirname(dir) === dir) return path.resolve(start, '..', '..');
  }
}

/** The app root (the folder whose package.json is horizon-runmap), from sources or from the compiled `out/` tree. */
export const REPO_ROOT = findRepoRoot(path.dirname(fileURLToPath(import.meta.url)));

let cachedVersion: string | undefined;
/** The app version from the app root's package.json ('unknown' when it cannot be read). */
export function toolVersion(): string {
  if (cachedVersion === undefined) {
    const version = readPackage(REPO_ROOT)?.version;
    cachedVersion = typeof version === 'string' && version !== '' ? version : 'unknown';
  }
  return cachedVersion;
}
