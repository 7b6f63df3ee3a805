import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { run } from '../../../../../electron/cli/commands/assets.js';
import { dataLayout } from '../../../../../electron/main/data-dir.js';
import { captureConsole } from '../capture-console.js';

const SHARED = path.resolve(import.meta.dirname, '..', '..', '..', '..', '..', '..', 'shared');
const PUNKT_FILES = 'abbrev_types.txt, collocations.tab, sent_starters.txt, ortho_context.tab';

const capture = (args: string[]) => captureConsole(() => run(args));

describe('horizon assets (in process, no network)', () => {
  let root: string;
  beforeAll(async () => {
    root = await mkdtemp(path.join(os.tmpdir(), 'horizon-cli-assets-'));
  });
  afterAll(() => rm(root, { recursive: true, force: true }));

  it('with --status only reports, downloading nothing, and exits 1 while an asset is missing', async () => {
    const dataDir = path.join(root, 'empty');
    const r = await capture(['--status', '--data-dir', dataDir]);
    const ifeval = path.join(dataLayout.ifevalDir(dataDir), 'input_data.jsonl');
    expect(r).toEqual({
      code: 1,
      out: `ifeval  missing ${ifeval}\npunkt   missing ${dataLayout.punktDir(dataDir)} (${PUNKT_FILES})`,
      errOut: '',
    });
    expect(existsSync(dataLayout.ifevalDir(dataDir))).toBe(false);
  });

  it('imports both assets, then reports them ready with 0', async () => {
    const dataDir = path.join(root, 'imported');
    const r = await capture([
      '--dir', dataDir,
      '--import-ifeval', path.join(SHARED, 'ifeval', 'input_data.jsonl'),
      '--import-punkt', path.join(SHARED, 'nltk', 'punkt_english'),
    ]);
    expect(r.code).toBe(0);
    expect(r.errOut).toBe('');
    expect(r.out).toMatch(/^imported .*input_data\.jsonl\nimported /);
    expect(r.out).toContain(`ifeval  ready   ${path.join(dataLayout.ifevalDir(dataDir), 'input_data.jsonl')}`);
    expect(r.out.split('\n').at(-1)).toBe(`punkt   ready   ${dataLayout.punktDir(dataDir)}`);
    expect(await capture(['--status', '--data-dir', dataDir])).toMatchObject({ code: 0, errOut: '' });
  });

  it('answers a file that is not the pinned asset with 1 and the reason', async () => {
    const r = await capture(['--data-dir', path.join(root, 'bad'), '--import-ifeval', path.join(SHARED, 'nltk', 'punkt_english', 'abbrev_types.txt')]);
    expect(r.code).toBe(1);
    expect(r.errOut).toMatch(/^horizon assets: /);
  });

  it('refuses --data-dir and --dir naming different folders as a usage error', async () => {
    const r = await capture(['--data-dir', path.join(root, 'a'), '--dir', path.join(root, 'b')]);
    expect(r).toMatchObject({ code: 2, errOut: expect.stringMatching(/^horizon assets: --data-dir and --dir name different folders/) });
  });
});
