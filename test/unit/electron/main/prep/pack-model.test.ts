import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { afterAll, describe, expect, it } from 'vitest';

import { defaultPackerCommand } from '../../../../../electron/main/prep/pack-model.js';
import { REPO_ROOT } from '../../../../../electron/node/app-root.js';

const tmp = mkdtempSync(path.join(os.tmpdir(), 'horizon-packer-cmd-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

describe('defaultPackerCommand', () => {
  it('runs the TypeScript CLI of a checkout', () => {
    const cmd = defaultPackerCommand(REPO_ROOT);
    expect(cmd.args).toEqual([path.join(REPO_ROOT, 'scripts', 'horizon.mjs')]);
    expect(cmd.env).toEqual({ ELECTRON_RUN_AS_NODE: '1' });
  });

  it('runs the compiled CLI where the sources are not shipped (a packaged app)', () => {
    const app = path.join(tmp, 'app');
    mkdirSync(path.join(app, 'out', 'electron', 'cli'), { recursive: true });
    writeFileSync(path.join(app, 'out', 'electron', 'cli', 'bin.js'), '');
    expect(defaultPackerCommand(app).args).toEqual([path.join(app, 'out', 'electron', 'cli', 'bin.js')]);
  });
});
