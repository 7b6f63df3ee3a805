import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { main } from '../../../../../electron/cli/index.js';
import { dataLayout, INTERRUPTED_RUN } from '../../../../../electron/main/data-dir.js';
import { openDatabase } from '../../../../../electron/main/db/open-database.js';
import { RunRepo } from '../../../../../electron/main/db/run-repo.js';
import { formatFigures, formatProgress } from '../../../../../electron/cli/commands/eval.js';
import { readZipEntries } from '../../../../../electron/main/export/verify-result-zip.js';
import { loadNativeBinding } from '../../../../../electron/worker/runtime/binding.js';
import { packModel } from '../../../../../electron/worker/runtime/pack.js';
import { makeTinyModel } from '../../../../../scripts/make-tiny-model.js';
import { sampleRun } from '../../main/db/sample-run.js';
import { captureConsole } from '../capture-console.js';
import { addonHasRuntime } from '../../../native-addon.js';

const capture = (argv: string[]) => captureConsole(() => main(argv));

function cudaDevicePresent(): boolean {
  try {
    return loadNativeBinding().probeDevices().devices.length > 0;
  } catch {
    return false;
  }
}

describe('horizon eval / verify / export: usage', () => {
  it('rejects bad flags with exit 2 and the usage', async () => {
    expect(await capture(['eval'])).toMatchObject({ code: 2, errOut: expect.stringMatching(/--model \(or --resume RUN_ID\) is required/) });
    expect(await capture(['eval', '--model', 'x', '--weights', 'fp8'])).toMatchObject({ code: 2, errOut: expect.stringMatching(/--weights must be int4 or bf16/) });
    expect(await capture(['eval', '--model', 'x', '--limit', 'ten'])).toMatchObject({ code: 2, errOut: expect.stringMatching(/--limit must be an integer from 1 to 541, got 'ten'/) });
    expect(await capture(['eval', '--model', 'x', '--limit', '600'])).toMatchObject({ code: 2, errOut: expect.stringMatching(/--limit must be an integer from 1 to 541/) });
    expect(await capture(['eval', '--model', 'x', '--batch', '0'])).toMatchObject({ code: 2, errOut: expect.stringMatching(/--batch must be an integer from 1 to 256/) });
    expect(await capture(['eval', '--model', 'x', '--expert-budget', '4slots'])).toMatchObject({ code: 2, errOut: expect.stringMatching(/--expert-budget for eval is a size in GiB/) });
    expect(await capture(['eval', '--model', 'x', '--expert-budget', 'lots'])).toMatchObject({ code: 2, errOut: expect.stringMatching(/--expert-budget must be <GiB>/) });
    expect(await capture(['verify'])).toMatchObject({ code: 2, errOut: expect.stringMatching(/give exactly one RESULT\.zip/) });
    expect(await capture(['verify', 'a.zip', 'b.zip'])).toMatchObject({ code: 2, errOut: expect.stringMatching(/give exactly one RESULT\.zip/) });
    expect(await capture(['eval', '--model', 'x', '--backend', 'cpu', '--device', '1'])).toMatchObject({
      code: 2,
      errOut: expect.stringMatching(/--device applies to the CUDA backend, not --backend cpu/),
    });
    expect(await capture(['eval', '--model', 'x', '--backend', 'cpu', '--expert-budget', '2'])).toMatchObject({
      code: 2,
      errOut: expect.stringMatching(/--expert-budget applies to the CUDA backend, not --backend cpu/),
    });
    expect(await capture(['eval', '--model', 'x', '--backend', 'rocm'])).toMatchObject({ code: 2, errOut: expect.stringMatching(/--backend must be auto, cpu or cuda/) });
    expect(await capture(['eval', '--model', 'x', '--label', 'a\tb'])).toMatchObject({
      code: 2,
      errOut: expect.stringMatching(/^horizon eval: --label: A label is one line of text, without control characters\./),
    });
  });

  it('refuses to resume a run made with another input_data.jsonl than the data folder has', async () => {
    const root = await mkdtemp(path.join(os.tmpdir(), 'horizon-cli-resume-dataset-'));
    try {
      const dataDir = path.join(root, 'data');
      const db = openDatabase(dataLayout.database(dataDir));
      const runs = new RunRepo(db);
      runs.create(sampleRun('run-other-set'));
      runs.markRunning('run-other-set');
      runs.finish('run-other-set', 'cancelled');
      db.close();
      const r = await capture(['eval', '--resume', 'run-other-set', '--data-dir', dataDir]);
      expect(r).toMatchObject({
        code: 1,
        errOut: expect.stringMatching(new RegExp(`^horizon eval: run run-other-set used input_data.jsonl ${'c'.repeat(64)}, the data folder has [0-9a-f]{64}$`)),
      });
      expect(r.out).not.toMatch(/resuming/);
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  });

  it('refuses a flag a resumed run would ignore (its model and settings are the stored run\'s)', async () => {
    const root = await mkdtemp(path.join(os.tmpdir(), 'horizon-cli-resume-flags-'));
    try {
      const dataDir = path.join(root, 'data');
      for (const extra of [['--limit', '5'], ['--batch', '1'], ['--weights', 'int4'], ['--backend', 'cpu'], ['--model', root]]) {
        const r = await capture(['eval', '--resume', 'some-run', '--data-dir', dataDir, ...extra]);
        expect(r).toMatchObject({ code: 2, errOut: expect.stringContaining(`horizon eval: ${extra[0]} cannot be combined with --resume`) });
      }
      expect(existsSync(dataDir)).toBe(false);
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  });

  it('names a folder that is not a model and writes nothing to the data folder', async () => {
    const root = await mkdtemp(path.join(os.tmpdir(), 'horizon-cli-bad-model-'));
    try {
      const dataDir = path.join(root, 'data');
      const r = await capture(['eval', '--model', path.join(root, 'nothing-here'), '--data-dir', dataDir]);
      expect(r.code).toBe(1);
      expect(r.errOut).toContain(`${path.join(root, 'nothing-here')}: not a model folder`);
      expect(existsSync(dataDir)).toBe(false);
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  });
});

describe.skipIf(!addonHasRuntime())('horizon eval end to end (skipped: addon not built with loadModel; run npm run build:native)', () => {
  let root: string;
  beforeAll(async () => {
    root = await mkdtemp(path.join(os.tmpdir(), 'horizon-cli-eval-'));
    await makeTinyModel(path.join(root, 'tiny'), { seed: 5 });
    await packModel({ src: path.join(root, 'tiny'), dst: path.join(root, 'tiny', 'int4-g32') });
  });
  afterAll(() => rm(root, { recursive: true, force: true }));

  it('runs, stores, writes a ZIP that verifies, and lists the run', async () => {
    const zip = path.join(root, 'out', 'result.zip');
    const dataDir = path.join(root, 'data');
    const r = await capture([
      'eval', '--model', path.join(root, 'tiny'), '--limit', '4', '--batch', '3', '--max-new-tokens', '8', '--label', ' first try ', '--data-dir', dataDir, '--out', zip,
    ]);
    expect(r.errOut).toBe('');
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/4 prompts, batch 3, max new tokens 8, greedy/);
    expect(r.out).toMatch(/run \S+ completed \(4\/4 responses\)/);
    // A progress line per stored response, with this session's speed (none before the first token).
    expect(r.out).toMatch(/^ {2}\[\d\/4\] \d+\.\d tok\/s, elapsed /m);
    expect(r.out).not.toMatch(/— tok\/s/);
    expect(r.out).toMatch(/prompt-level: {6}strict \d+\.\d\d% {2}loose \d+\.\d\d%/);
    // Their 95% intervals, each around its accuracy.
    const strict = Number(/prompt-level: {6}strict (\d+\.\d\d)%/.exec(r.out)![1]);
    const range = /95% intervals \(prompts: Wilson; instructions: clustered by prompt\):\n {2}prompt-level: {6}strict (\d+\.\d)-(\d+\.\d)%/.exec(r.out);
    expect(range).not.toBeNull();
    expect(Number(range![1])).toBeLessThanOrEqual(strict);
    expect(Number(range![2])).toBeGreaterThanOrEqual(strict);
    // The CPU run's figures, without a GPU memory figure.
    expect(r.out).toMatch(/^figures: \d+ tokens in \d+\.\d s \(\d+\.\d tok\/s overall\), mean TTFT \d+ ms, mean decode \d+\.\d tok\/s$/m);
    expect(r.out).toContain(`result ZIP ${zip}`);
    // The command it suggests for reading the results runs as printed.
    const hint = /^read the failures: npx horizon show (\S+) --failed strict --data-dir (\S+) \(--key K for one response\)$/m.exec(r.out);
    expect(hint?.[2]).toBe(dataDir);
    const shown = await capture(['show', hint![1]!, '--failed', 'strict', '--data-dir', dataDir]);
    expect(shown).toMatchObject({ code: 0, out: expect.stringMatching(/\n\d of the 4 responses fail strict; horizon show \S+ --key K shows one$/) });
    const v = await capture(['verify', zip]);
    expect(v).toMatchObject({ code: 0, out: expect.stringMatching(new RegExp(`^verified ${zip.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`)) });
    const list = await capture(['export', '--list', '--data-dir', dataDir]);
    expect(list.out).toMatch(/completed 4\/4 {2}local:tiny\/int4-g32 {2}CPU.* "first try"$/m);
    const manifest = JSON.parse((await readZipEntries(zip)).get('manifest.json')!.toString('utf8')) as { run: { label?: string } };
    expect(manifest.run.label).toBe('first try');
    const again = await capture(['eval', '--resume', 'no-such-run', '--data-dir', dataDir]);
    expect(again.code).toBe(1);
    expect(again.errOut).toMatch(/run no-such-run is not in/);
    const runId = /run (\S+) completed/.exec(r.out)?.[1];
    const completed = await capture(['eval', '--resume', runId ?? '', '--data-dir', dataDir]);
    expect(completed).toMatchObject({ code: 1, errOut: expect.stringContaining(`run ${runId} is already complete; export it with: npx horizon export ${runId}`) });
    expect(await capture(['export', '--list', '--data-dir', path.join(root, 'mistyped')])).toMatchObject({
      code: 1,
      errOut: expect.stringContaining('no database at'),
    });
    expect(existsSync(path.join(root, 'mistyped'))).toBe(false);
    expect(await capture(['export', 'a', 'b', '--data-dir', dataDir])).toMatchObject({ code: 2 });
    // An --out that cannot be written fails before the run, not after it.
    const blocker = path.join(root, 'a-file');
    await writeFile(blocker, 'x');
    const early = await capture(['eval', '--model', path.join(root, 'tiny'), '--limit', '1', '--data-dir', dataDir, '--out', path.join(blocker, 'r.zip')]);
    expect(early).toMatchObject({ code: 1, errOut: expect.stringMatching(/--out .*r\.zip: cannot write into .*a-file \((EEXIST|ENOTDIR)\)/) });
    expect(early.out).toBe('');
    expect(existsSync(path.join(dataDir, '.runmap.lock'))).toBe(false);
  });

  it('marks a run another process left running as failed (resumable), as the app does when it starts', async () => {
    const dataDir = path.join(root, 'left-running');
    const db = openDatabase(dataLayout.database(dataDir));
    const runs = new RunRepo(db);
    runs.create(sampleRun('run-left'));
    runs.markRunning('run-left');
    db.close();
    const r = await capture(['eval', '--model', path.join(root, 'tiny'), '--limit', '1', '--max-new-tokens', '2', '--data-dir', dataDir]);
    expect(r.code).toBe(0);
    const after = openDatabase(dataLayout.database(dataDir));
    expect(new RunRepo(after).require('run-left')).toMatchObject({ status: 'failed', error: INTERRUPTED_RUN });
    after.close();
  });

  it.skipIf(cudaDevicePresent())('refuses --backend cuda without a CUDA device before storing a run (skipped: this machine has one)', async () => {
    const dataDir = path.join(root, 'no-gpu');
    const r = await capture(['eval', '--model', path.join(root, 'tiny'), '--limit', '1', '--backend', 'cuda', '--data-dir', dataDir]);
    expect(r).toMatchObject({ code: 1, errOut: expect.stringMatching(/^horizon eval: no CUDA device for --backend cuda: /) });
    const list = await capture(['export', '--list', '--data-dir', dataDir]);
    expect(list.out).not.toMatch(/local:tiny/);
  });

  it('refuses a data folder that the app (another live process) has open, and leaves its lock alone', async () => {
    const dataDir = path.join(root, 'busy');
    await mkdir(dataDir, { recursive: true });
    const lock = path.join(dataDir, '.runmap.lock');
    await writeFile(lock, String(process.ppid));
    const r = await capture(['eval', '--model', path.join(root, 'tiny'), '--limit', '1', '--data-dir', dataDir]);
    expect(r.code).toBe(1);
    expect(r.errOut).toBe(
      `horizon eval: ${dataDir} is in use by process ${process.ppid} (the Horizon RunMap app, horizon serve or horizon eval); close it first ` +
        `(if process ${process.ppid} is none of these, delete ${lock})`,
    );
    expect(await readFile(lock, 'utf8')).toBe(String(process.ppid));
    expect(existsSync(path.join(dataDir, 'runmap.sqlite'))).toBe(false);
  });

  it("refuses a --db inside another live process's data folder, releasing the lock it took on its own", async () => {
    const appDir = path.join(root, 'app-data');
    await mkdir(appDir, { recursive: true });
    await writeFile(path.join(appDir, '.runmap.lock'), String(process.ppid));
    const mine = path.join(root, 'mine');
    const r = await capture(['eval', '--model', path.join(root, 'tiny'), '--limit', '1', '--data-dir', mine, '--db', path.join(appDir, 'runmap.sqlite')]);
    expect(r).toMatchObject({
      code: 1,
      errOut:
        `horizon eval: ${appDir} is in use by process ${process.ppid} (the Horizon RunMap app, horizon serve or horizon eval); close it first ` +
        `(if process ${process.ppid} is none of these, delete ${path.join(appDir, '.runmap.lock')})`,
    });
    expect(existsSync(path.join(mine, '.runmap.lock'))).toBe(false);
    expect(existsSync(path.join(appDir, 'runmap.sqlite'))).toBe(false);
  });
});

describe('formatFigures', () => {
  const base = {
    batches: 1, generatedTokens: 1000, wallMs: 4000, peakMemoryBytes: 3 * 2 ** 30, h2dBytes: 2e9, meanTtftMs: 41.6, meanDecodeTokensPerSecond: 77.25,
    expertCache: null,
  };
  it.each([
    ['cuda', 'process', 'peak VRAM 3.00 GiB (this process), H2D 2.00 GB'],
    ['cuda', 'device', 'peak VRAM 3.00 GiB (whole GPU, other processes included), H2D 2.00 GB'],
    ['cuda', null, 'peak VRAM 3.00 GiB (scope unknown), H2D 2.00 GB'],
  ] as const)('%s with scope %s says what the peak measures', (backend, peakMemoryScope, tail) => {
    expect(formatFigures({ ...base, peakMemoryScope }, backend)).toBe(
      `figures: 1000 tokens in 4.0 s (250.0 tok/s overall), mean TTFT 42 ms, mean decode 77.3 tok/s, ${tail}`,
    );
  });
  it('gives no overall speed without generating time, and no GPU memory figure the backend did not measure', () => {
    expect(formatFigures({ ...base, generatedTokens: 0, wallMs: 0, peakMemoryBytes: 0, peakMemoryScope: null, meanTtftMs: null, meanDecodeTokensPerSecond: null }, 'cuda')).toBe(
      'figures: 0 tokens in 0.0 s (— tok/s overall)',
    );
  });
  it('adds the expert cache counts a CUDA run reported', () => {
    expect(formatFigures({ ...base, peakMemoryScope: 'process', expertCache: { hits: 900, misses: 40, evictions: 12 } }, 'cuda')).toMatch(
      /H2D 2\.00 GB, expert cache 900 hits \/ 40 misses \/ 12 evictions$/,
    );
  });
  it('gives no GPU figures for the CPU backend', () => {
    expect(formatFigures({ ...base, peakMemoryBytes: 0, peakMemoryScope: null, meanTtftMs: null }, 'cpu')).toBe(
      'figures: 1000 tokens in 4.0 s (250.0 tok/s overall), mean decode 77.3 tok/s',
    );
  });
});

describe('formatProgress', () => {
  const p = { runId: 'r', status: 'running' as const, done: 120, total: 541, etaSeconds: 400, elapsedSeconds: 95 };
  it("gives this session's speed and the whole run's generating time", () => {
    expect(formatProgress({ ...p, tokensPerSecond: 312.26 })).toBe('  [120/541] 312.3 tok/s, elapsed 1m35s, ETA 6m40s');
  });
  it.each([
    [59, '59s'],
    [60, '1m0s'],
    [3599, '59m59s'],
    [3600, '1h0m'],
    [3690, '1h2m'],
    [5400, '1h30m'],
    // Rounded as a whole, not part by part (which gave "60s", "1m60s" and "1h60m").
    [59.6, '1m0s'],
    [119.6, '2m0s'],
    [7170, '2h0m'],
  ])('writes %j seconds as %j', (seconds, text) => {
    expect(formatProgress({ ...p, tokensPerSecond: 1, elapsedSeconds: seconds })).toBe(`  [120/541] 1.0 tok/s, elapsed ${text}, ETA 6m40s`);
  });
  it('says no speed before this session has generated (a resumed run loading its model)', () => {
    expect(formatProgress({ ...p, tokensPerSecond: null, etaSeconds: null })).toBe('  [120/541] — tok/s, elapsed 1m35s, ETA estimating');
  });
});
