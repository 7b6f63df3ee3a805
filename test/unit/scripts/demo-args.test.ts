import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { describe, expect, it } from 'vitest';

import { main as horizon } from '../../../electron/cli/index.js';
import { lockDataDir } from '../../../electron/main/data-dir.js';
import { readZipEntries } from '../../../electron/main/export/verify-result-zip.js';
import { DEMO_DEFAULTS, DemoUsageError, parseDemoArgs } from '../../../scripts/lib/demo-args.js';
import { captureConsole } from '../electron/cli/capture-console.js';
import { addonHasRuntime } from '../native-addon.js';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..');

describe('npm run demo: flags', () => {
  it('takes the documented flags, with the documented defaults', () => {
    expect(parseDemoArgs([])).toEqual({ dataDir: undefined, ...DEMO_DEFAULTS });
    expect(parseDemoArgs(['--data-dir', '/tmp/d', '--limit', '20', '--max-new-tokens', '8', '--batch', '4'])).toEqual({
      dataDir: '/tmp/d', limit: 20, maxNewTokens: 8, batch: 4,
    });
    expect(parseDemoArgs(['--help'])).toBe('help');
    expect(parseDemoArgs(['-h'])).toBe('help');
  });

  it('refuses an unknown flag or a value horizon eval would refuse, before any work', () => {
    expect(() => parseDemoArgs(['--bogus'])).toThrow(DemoUsageError);
    expect(() => parseDemoArgs(['--limit', '600'])).toThrow(/--limit must be an integer from 1 to 541, got '600'/);
    expect(() => parseDemoArgs(['--limit', '0'])).toThrow(DemoUsageError);
    expect(() => parseDemoArgs(['--batch', '2.5'])).toThrow(/--batch must be an integer from 1 to 256/);
  });
});

describe('npm run demo: the process', () => {
  const demo = (args: string[]) =>
    spawnSync(process.execPath, ['--import', 'tsx', path.join(repoRoot, 'scripts', 'demo.ts'), ...args], { cwd: repoRoot, encoding: 'utf8' });

  it('exits 2 with the usage on a bad flag', () => {
    const r = demo(['--limit', '600']);
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/^demo: --limit must be an integer from 1 to 541, got '600'\nusage: npm run demo -- /);
  }, 60_000);

  it('leaves a data folder another process holds alone (exit 1, naming it)', () => {
    const dataDir = mkdtempSync(path.join(os.tmpdir(), 'horizon-demo-locked-'));
    const unlock = lockDataDir(dataDir);
    try {
      const r = demo(['--data-dir', dataDir, '--limit', '1']);
      expect(r.status).toBe(1);
      expect(r.stderr).toContain(`demo: ${dataDir} is in use by`);
      expect(readdirSync(dataDir).filter((n) => !n.startsWith('.runmap.lock'))).toEqual([]);
    } finally {
      unlock();
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 60_000);
});

describe.skipIf(!addonHasRuntime())('npm run demo: the main job (skipped: addon not built with loadModel; run npm run build:native)', () => {
  it('generates, prepares, runs, verifies and checks INT4 against BF16, and the commands it prints run', async () => {
    const dataDir = mkdtempSync(path.join(os.tmpdir(), 'horizon-demo-'));
    try {
      const r = spawnSync(
        process.execPath,
        ['--import', 'tsx', path.join(repoRoot, 'scripts', 'demo.ts'), '--data-dir', dataDir, '--limit', '4', '--max-new-tokens', '8', '--batch', '2'],
        { cwd: repoRoot, encoding: 'utf8' },
      );
      expect(r.stderr).toBe('');
      expect(r.status).toBe(0);
      const steps = r.stdout.split('\n').filter((l) => /^\d\. /.test(l));
      expect(steps.map((l) => l.slice(0, 2))).toEqual(['1.', '2.', '3.', '4.', '5.']);
      expect(steps[1]).toMatch(/^2\. prepared horizon-demo\/tiny-olmoe@[0-9a-f]{7} from the local Hub \(http:\/\/127\.0\.0\.1:\d+\): downloaded, verified, packed to INT4/);
      expect(r.stdout).toMatch(/\n {3}completed in [\d.]+ s: \d+ tokens generated/);
      expect(steps[4]).toBe('5. result ZIP verified, carrying the INT4 check');
      expect(steps[3]).toMatch(/^4\. INT4 against BF16 on the same tokens \(first 4 prompts, \d+ positions\) in [\d.]+ s: top-1 agreement \d+\.\d\d%, mean KL \d\.\d\de-\d nats$/);
      const q4_0 = /^ {3}llama\.cpp's Q4_0 \(8-bit inputs, as llama\.cpp runs it\) on the same experts and tokens: top-1 agreement [\d.]+%, mean KL (\d\.\d\de-\d) nats \(INT4's is (\d+\.\d\d)x, 95% CI (\d+\.\d\d-\d+\.\d\dx)\)$/m.exec(r.stdout);
      expect(q4_0).not.toBeNull();
      expect(r.stdout).toMatch(/\n {3}INT4 is closer to BF16 on \d+ prompts?, Q4_0 on \d+ \(sign test p [=<] [\d.]+\)\n/);
      // The check's report is where the Models page reads it, over the prompts the demo said.
      const qualityFile = /^ {2}INT4 check {2}(\S+)$/m.exec(r.stdout)![1]!;
      const stored = JSON.parse(readFileSync(qualityFile, 'utf8')) as { meanKl: number; q4_0: { meanKl: number; meanKlRatioCi95: [number, number] } };
      expect(stored).toMatchObject({ format: 'horizon-quality-v1', prompts: 4, limit: 4 });
      expect(q4_0![1]).toBe(stored.q4_0.meanKl.toExponential(2));
      expect(q4_0![2]).toBe((stored.meanKl / stored.q4_0.meanKl).toFixed(2));
      expect(q4_0![3]).toBe(stored.q4_0.meanKlRatioCi95.map((v) => v.toFixed(2)).join('-') + 'x');
      // horizon show names it under the run's device, as Results does.
      const runId = /^read its failures: npx horizon show (\S+) /m.exec(r.stdout)![1]!;
      const shown = await captureConsole(() => horizon(['show', runId, '--data-dir', dataDir]));
      expect(shown.out).toMatch(new RegExp(`\\n {2}quality {3}INT4 check \\(4 prompts, \\d+ positions\\): .*; llama\\.cpp's Q4_0: [\\d.]+%, ${q4_0![1]} nats \\(INT4's mean KL ${q4_0![2]}x, 95% CI ${q4_0![3]}\\)\\n`));
      // prepare --list shows the check under the model it checked.
      const listed = await captureConsole(() => horizon(['prepare', '--list', '--data-dir', dataDir]));
      expect(listed.out).toMatch(
        new RegExp(`\\n {10}INT4 check \\(4 prompts, \\d+ positions\\): top-1 agreement [\\d.]+%, mean KL \\d\\.\\d\\de-\\d nats; llama\\.cpp's Q4_0: [\\d.]+%, ${q4_0![1]} nats \\(INT4's mean KL ${q4_0![2]}x, 95% CI ${q4_0![3]}\\)$`),
      );
      // Both commands it suggests run as printed.
      const verify = /^check it yourself: npx horizon (verify \S+)$/m.exec(r.stdout)![1]!.split(' ');
      expect(await captureConsole(() => horizon(verify))).toMatchObject({ code: 0, out: expect.stringMatching(/^verified /) });
      const show = /^read its failures: npx horizon (show .+)$/m.exec(r.stdout)![1]!.split(' ');
      expect(await captureConsole(() => horizon(show))).toMatchObject({ code: 0, out: expect.stringMatching(/\d of the 4 responses fail strict/) });
      // The run's ZIP carries the check of its model (v3): verify prints it as carried, and a data folder that imports
      // the ZIP names it under the run.
      const zipFile = /^ {2}result ZIP {2}(\S+)$/m.exec(r.stdout)![1]!;
      expect((JSON.parse((await readZipEntries(zipFile)).get('manifest.json')!.toString('utf8')) as { format: string }).format).toBe('horizon-result-v3');
      const carried = await captureConsole(() => horizon(['verify', zipFile]));
      expect(carried.out).toMatch(
        new RegExp(`\\ncarried, not re-checked \\(that needs the model\\): INT4 check \\(4 prompts, \\d+ positions\\): .*; llama\\.cpp's Q4_0: [\\d.]+%, ${q4_0![1]} nats`),
      );
      const elsewhere = path.join(dataDir, 'elsewhere');
      const punkt = path.join(repoRoot, '..', 'shared', 'nltk', 'punkt_english');
      expect(await captureConsole(() => horizon(['import', zipFile, '--data-dir', elsewhere, '--punkt', punkt]))).toMatchObject({ code: 0 });
      const shownThere = await captureConsole(() => horizon(['show', runId, '--data-dir', elsewhere]));
      expect(shownThere.out).toMatch(new RegExp(`\\n {2}quality {3}INT4 check \\(4 prompts, \\d+ positions\\): .*, ${q4_0![1]} nats .*, as the run's result ZIP carried it\\n`));
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 180_000);
});
