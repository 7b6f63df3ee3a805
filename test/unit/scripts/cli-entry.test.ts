import { mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { afterEach, beforeEach, describe, expect, it } from 'vitest';

// @ts-expect-error: a plain .mjs script without type declarations
import { chooseCliEntry } from '../../../scripts/cli-entry.mjs';

const choose = chooseCliEntry as (root: string, env?: Record<string, string | undefined>) => 'built' | 'sources';

describe('horizon starts from the build only while it is current', () => {
  let root: string;
  const at = (file: string, seconds: number) => {
    mkdirSync(path.dirname(path.join(root, file)), { recursive: true });
    writeFileSync(path.join(root, file), '');
    utimesSync(path.join(root, file), seconds, seconds);
  };
  beforeEach(() => {
    root = mkdtempSync(path.join(os.tmpdir(), 'horizon-entry-'));
    at('electron/cli/index.ts', 1_000);
    at('evals/ifeval/scorer.ts', 1_000);
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  it.each([
    ['no build', [], {}, 'sources'],
    ['a build newer than every source', [['out/electron/cli/bin.js', 2_000]], {}, 'built'],
    ['a source edited after the build', [['out/electron/cli/bin.js', 2_000], ['electron/main/x.ts', 3_000]], {}, 'sources'],
    ['an eval source edited after the build', [['out/electron/cli/bin.js', 2_000], ['evals/ifeval/y.ts', 3_000]], {}, 'sources'],
    ['a newer non-TypeScript file', [['out/electron/cli/bin.js', 2_000], ['electron/notes.md', 3_000]], {}, 'built'],
    ['HORIZON_FROM_SOURCES=1', [['out/electron/cli/bin.js', 2_000]], { HORIZON_FROM_SOURCES: '1' }, 'sources'],
  ] as const)('%s: %s', (_what, files, env, expected) => {
    for (const [f, t] of files) at(f, t);
    expect(choose(root, env)).toBe(expected);
  });
});
