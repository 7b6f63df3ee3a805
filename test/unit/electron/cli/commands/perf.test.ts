import { readdirSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { main } from '../../../../../electron/cli/index.js';
import { openDatabase } from '../../../../../electron/main/db/open-database.js';
import { PerfRepo } from '../../../../../electron/main/db/perf-repo.js';
import { makeTinyModel } from '../../../../../scripts/make-tiny-model.js';
import { captureConsole } from '../capture-console.js';
import { addonHasRuntime } from '../../../native-addon.js';

const capture = (argv: string[]) => captureConsole(() => main(argv));

describe('horizon perf: usage', () => {
  it.each([
    [['perf'], /--model is required|missing --model|--model/],
    [['perf', '--model', 'x', '--expert-budget', '4,lots'], /expert budget 'lots' must be a number of GiB from 0\.25 to 1024/],
    [['perf', '--model', 'x', '--backend', 'cpu', '--expert-budget', '4'], /--expert-budget and --device apply to the CUDA backend, not --backend cpu/],
    [['perf', '--model', 'x', '--weights', 'fp8'], /--weights must be int4 or bf16/],
    [['perf', '--model', 'x', '--label', 'x'.repeat(81)], /^horizon perf: --label: A label has at most 80 characters \(this one has 81\)\./],
    [['perf', '--list', '--model', 'x'], /^horizon perf: --list takes no --model/],
  ])('%j exits 2 with the usage', async (argv, message) => {
    expect(await capture(argv)).toMatchObject({ code: 2, errOut: expect.stringMatching(message) });
  });
});

describe.skipIf(!addonHasRuntime())('horizon perf on the tiny model (CPU)', () => {
  let root: string;
  beforeAll(async () => {
    root = await mkdtemp(path.join(os.tmpdir(), 'horizon-cli-perf-'));
    await makeTinyModel(path.join(root, 'tiny'));
  });
  afterAll(() => rm(root, { recursive: true, force: true }));

  it('runs the fixed campaign, stores it, and writes a ZIP that verify accepts', async () => {
    const dataDir = path.join(root, 'data');
    const r = await capture(['perf', '--model', path.join(root, 'tiny'), '--weights', 'bf16', '--backend', 'cpu', '--label', ' tiny bf16 ', '--data-dir', dataDir]);
    expect(r.code, r.errOut).toBe(0);
    expect(r.out).toMatch(/12 prompts × 3 blocks, 128 new tokens, EOS suppressed, warm-up 64 tokens excluded/);
    expect(r.out).toMatch(/full residency\s+\d+\.\d\s+\d+\s+\d+\s+n\/a on CPU\s+n\/a\s+n\/a/);
    const db = openDatabase(path.join(dataDir, 'runmap.sqlite'));
    let id: string;
    try {
      const [c] = new PerfRepo(db).list();
      expect(c).toMatchObject({ status: 'completed', backend: 'cpu', label: 'tiny bf16', settings: { prompts: 12, blocks: 3, maxNewTokens: 128, warmupTokens: 64 } });
      id = c!.id;
      const detail = new PerfRepo(db).get(id)!;
      expect(detail.requests).toHaveLength(36);
      // EOS suppressed: every request generated its whole budget.
      expect(detail.requests.every((q) => q.tokens === 128)).toBe(true);
    } finally {
      db.close();
    }
    const zips = readdirSync(path.join(dataDir, 'exports'));
    expect(zips).toEqual([`${id}.zip`]);
    const v = await capture(['verify', path.join(dataDir, 'exports', zips[0]!)]);
    expect(v).toMatchObject({ code: 0, out: expect.stringContaining('(performance campaign)') });
    // --list names it, with its label, as the other commands take it.
    const list = await capture(['perf', '--list', '--data-dir', dataDir]);
    expect(list).toMatchObject({ code: 0, errOut: '' });
    expect(list.out).toMatch(new RegExp(`^${id} {2}completed 36 requests {2}local:tiny/bf16 {2}CPU.* {2}"tiny bf16"$`));
    expect(await capture(['perf', '--list', '--data-dir', path.join(root, 'none')])).toMatchObject({ code: 1, errOut: expect.stringContaining('no database at') });
  }, 120_000);
});
