import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { fileURLToPath } from 'node:url';

import { afterAll, describe, expect, it } from 'vitest';

import { openDatabase } from '../../../../electron/main/db/open-database.js';
import { RunRepo } from '../../../../electron/main/db/run-repo.js';
import { makeTinyModel } from '../../../../scripts/make-tiny-model.js';
import { addonHasRuntime } from '../../native-addon.js';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..', '..');

describe.skipIf(!addonHasRuntime())('horizon eval whose output is closed (skipped: addon not built; run npm run build:native)', () => {
  const dirs: string[] = [];
  afterAll(() => Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true }))));

  it('cancels the run as Ctrl-C does (resumable, exit 130) instead of ending with status 0 and the run left running', async () => {
    const root = await mkdtemp(path.join(os.tmpdir(), 'horizon-cli-epipe-'));
    dirs.push(root);
    await makeTinyModel(path.join(root, 'tiny'));
    const dataDir = path.join(root, 'data');
    const child = spawn(
      process.execPath,
      [path.join(repoRoot, 'scripts', 'horizon.mjs'), 'eval', '--model', path.join(root, 'tiny'), '--weights', 'bf16', '--max-new-tokens', '64', '--data-dir', dataDir],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let stderr = '';
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (t: string) => (stderr += t));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    // As `| head` does: read until the run has started, then close the pipe.
    for await (const line of readline.createInterface({ input: child.stdout })) {
      if (/^run \S+: /.test(line)) break;
    }
    child.stdout.destroy();
    expect(await exited, stderr).toBe(130);
    expect(stderr).toContain('horizon eval: the output was closed; cancelling');
    const db = openDatabase(path.join(dataDir, 'runmap.sqlite'));
    try {
      const runs = new RunRepo(db).list();
      expect(runs.map((r) => r.status)).toEqual(['cancelled']);
    } finally {
      db.close();
    }
  }, 120_000);
});
