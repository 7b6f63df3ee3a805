// Which entry `horizon` starts from (see horizon.mjs): the compiled out/electron/cli/bin.js when it exists and no
// TypeScript source under electron/ or evals/ is newer than it, else the sources (through tsx).
import { existsSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';

/** Whether any .ts under `dirs` (relative to `root`) was modified after `since` (ms). */
function sourcesNewerThan(root, since, dirs) {
  const stack = dirs.map((d) => path.join(root, d));
  while (stack.length) {
    const dir = stack.pop();
    let entries;
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch {
      continue;
    }
    for (const e of entries) {
      const p = path.join(dir, e.name);
      if (e.isDirectory()) stack.push(p);
      else if (e.name.endsWith('.ts') && statSync(p).mtimeMs > since) return true;
    }
  }
  return false;
}

/** 'built' or 'sources'; HORIZON_FROM_SOURCES=1 always takes the sources. */
export function chooseCliEntry(root, env = process.env) {
  const built = path.join(root, 'out', 'electron', 'cli', 'bin.js');
  if (env.HORIZON_FROM_SOURCES === '1' || !existsSync(built)) return 'sources';
  return sourcesNewerThan(root, statSync(built).mtimeMs, ['electron', 'evals']) ? 'sources' : 'built';
}
