import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { describe, expect, it } from 'vitest';

import { lockDataDir } from '../../../electron/main/data-dir.js';
import { DEMO_DEFAULTS, DemoUsageError, parseDemoArgs } from '../../../scripts/lib/demo-args.js';

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
