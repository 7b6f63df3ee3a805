import path from 'node:path';

import { ESLint } from 'eslint';
import { describe, expect, it } from 'vitest';

const root = path.resolve(import.meta.dirname, '..', '..', '..');

async function lint(file: string, code: string): Promise<string[]> {
  const eslint = new ESLint({ cwd: root });
  const [result] = await eslint.lintText(code, { filePath: path.join(root, file) });
  return (result?.messages ?? []).filter((m) => m.ruleId === 'local/layering').map((m) => m.message);
}

// Each row: a file in some layer, an import it makes, and whether the layer rule must reject it.
describe('process-layer lint rule', () => {
  it.each([
    ['renderer/src/x.ts', "import fs from 'node:fs';\nexport const a = fs;", true],
    ['renderer/src/x.ts', "import { app } from 'electron';\nexport const a = app;", true],
    ['renderer/src/x.ts', "import { x } from '../../electron/main/y.js';\nexport const a = x;", true],
    ['renderer/src/x.ts', "import type { X } from '../../evals/ifeval/types.js';\nexport type A = X;", false],
    ['renderer/src/x.ts', "import { x } from '../../electron/common/y.js';\nexport const a = x;", false],
    ['electron/common/x.ts', "import path from 'node:path';\nexport const a = path;", true],
    ['electron/common/x.ts', "import { x } from '../worker/y.js';\nexport const a = x;", true],
    ['electron/preload/index.ts', "import { x } from '../main/y.js';\nexport const a = x;", true],
    ['electron/preload/index.ts', "import { contextBridge } from 'electron';\nexport const a = contextBridge;", false],
    ['electron/main/x.ts', "import { x } from '../worker/y.js';\nexport const a = x;", true],
    ['electron/main/x.ts', "import Database from 'better-sqlite3';\nexport const a = Database;", false],
    ['electron/worker/x.ts', "import Database from 'better-sqlite3';\nexport const a = Database;", true],
    ['electron/worker/x.ts', "import { app } from 'electron';\nexport const a = app;", true],
    ['electron/worker/x.ts', "const m = require('../../native/build/Release/horizon_runtime.node');\nexport const a = m;", true],
    ['electron/node/x.ts', "import fs from 'node:fs';\nexport const a = fs;", false],
    ['electron/node/x.ts', "import { x } from '../main/y.js';\nexport const a = x;", true],
    ['electron/node/x.ts', "import { app } from 'electron';\nexport const a = app;", true],
    ['electron/worker/x.ts', "import { x } from '../node/y.js';\nexport const a = x;", false],
    ['renderer/src/x.ts', "import { x } from '../../electron/node/y.js';\nexport const a = x;", true],
    ['evals/ifeval/x.ts', "import fs from 'node:fs';\nexport const a = fs;", true],
    ['evals/ifeval/node/x.ts', "import fs from 'node:fs';\nexport const a = fs;", false],
    ['evals/ifeval/x.ts', "import { x } from '../../electron/common/y.js';\nexport const a = x;", true],
  ])('%s: %s → rejected=%s', async (file, code, rejected) => {
    const messages = await lint(file, code);
    if (rejected) {
      expect(messages.length).toBeGreaterThan(0);
      expect(messages[0]).toMatch(/^Bad layering/);
    } else {
      expect(messages).toEqual([]);
    }
  });
});
