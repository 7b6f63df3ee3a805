import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { run } from '../../../../../electron/cli/commands/compare.js';
import { main } from '../../../../../electron/cli/index.js';
import { dataLayout } from '../../../../../electron/main/data-dir.js';
import { openDatabase } from '../../../../../electron/main/db/open-database.js';
import { ResponseRepo } from '../../../../../electron/main/db/response-repo.js';
import type { StoredResponse, StoredResponseWithPass } from '../../../../../electron/main/db/response-repo.js';
import { RunRepo } from '../../../../../electron/main/db/run-repo.js';
import { compareResponses } from '../../../../../electron/main/services/run-compare.js';
import { captureConsole } from '../../cli/capture-console.js';
import { sampleRun } from '../db/sample-run.js';

/** A response of `key` whose instructions have these strict/loose verdicts (pass = every one passes). */
function response(key: number, text: string, verdicts: [boolean, boolean][]): StoredResponseWithPass {
  return {
    key, position: key, prompt: `prompt ${key}`, response: text, tokens: 3, finishReason: 'stop', ttftMs: 1, decodeTokensPerSecond: 1,
    verdicts: verdicts.map(([strict, loose], i) => ({ instructionId: `kind:${i}`, kwargs: {}, strict, loose })),
    strictPass: verdicts.every(([s]) => s),
    loosePass: verdicts.every(([, l]) => l),
  };
}

const T: [boolean, boolean] = [true, true];
const F: [boolean, boolean] = [false, false];
const L: [boolean, boolean] = [false, true]; // fails strict, passes loose

// Run A and run B over keys 1..6 (A) and 2..7 (B): five common prompts.
const A = [
  response(1, 'only in A', [T]),
  response(2, 'same', [T, T]), // both pass
  response(3, 'a3', [T]), // strict regression: B fails both
  response(4, 'One two\nthree.', [T, T]), // strict-only regression: B passes loose
  response(5, 'a5', [F]), // improvement
  response(6, 'same too', [F, T]), // both fail strict and loose
];
const B = [
  response(2, 'same', [T, T]),
  response(3, 'b3', [F]),
  response(4, 'One two\nfour, five.', [T, L]),
  response(5, 'b5', [T]),
  response(6, 'same too', [F, T]),
  response(7, 'only in B', [T]),
];

describe('compareResponses', () => {
  const { changed, stats } = compareResponses(A, B);

  it('compares only the prompts both runs scored', () => {
    expect(stats.common).toBe(5);
    expect(stats.identicalResponses).toBe(2);
    expect(stats.instructionMismatches).toBe(0);
  });

  it('counts the paired table at each level by hand', () => {
    expect(stats.promptStrict).toMatchObject({ n: 5, bothPass: 1, regressions: 2, improvements: 1, bothFail: 1 });
    expect(stats.promptLoose).toMatchObject({ n: 5, bothPass: 2, regressions: 1, improvements: 1, bothFail: 1 });
    // Instructions, strict: #2 two both pass; #3 one regression; #4 one both pass, one regression; #5 one improvement;
    // #6 one both fail, one both pass. Loose: #4's second instruction passes in both.
    expect(stats.instructionStrict).toMatchObject({ n: 8, bothPass: 4, regressions: 2, improvements: 1, bothFail: 1 });
    expect(stats.instructionLoose).toMatchObject({ n: 8, bothPass: 5, regressions: 1, improvements: 1, bothFail: 1 });
    expect(stats.promptStrict.pValue).toBeCloseTo((2 * (1 + 3)) / 8, 12); // n 3, k 1 -> 1
    expect(stats.promptStrict.delta).toBeCloseTo(0.4 - 0.6, 12);
  });

  it('tallies the instruction levels by type by hand', () => {
    // kind:0 is every prompt's first instruction (#2-#6): #3 regresses, #5 improves. kind:1 is #2, #4 and #6's second:
    // #4's fails strict in B and passes loose.
    expect(stats.byInstructionType).toEqual([
      { instructionId: 'kind:0', n: 5, strictA: 3, strictB: 3, looseA: 3, looseB: 3, strictRegressions: 1, strictImprovements: 1 },
      { instructionId: 'kind:1', n: 3, strictA: 3, strictB: 2, looseA: 3, looseB: 3, strictRegressions: 1, strictImprovements: 0 },
    ]);
  });

  it('lists strict regressions first, then loose-only ones, then improvements', () => {
    expect(changed.map((c) => c.key)).toEqual([3, 4, 5]);
    expect(changed[0]).toMatchObject({ a: { strict: true, loose: true }, b: { strict: false, loose: false } });
  });

  it('leaves prompts whose instruction lists differ out of the instruction levels', () => {
    const other = { ...B[0]!, verdicts: [{ instructionId: 'other:0', kwargs: {}, strict: true, loose: true }] };
    const r = compareResponses(A, [other, ...B.slice(1)]);
    expect(r.stats.instructionMismatches).toBe(1);
    expect(r.stats.instructionStrict.n).toBe(6);
    expect(r.stats.byInstructionType.map((t) => [t.instructionId, t.n])).toEqual([['kind:0', 4], ['kind:1', 2]]);
    expect(r.stats.promptStrict.n).toBe(5);
  });
});

describe('horizon compare', () => {
  let dataDir: string;
  beforeAll(async () => {
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'horizon-cli-compare-'));
    const db = openDatabase(dataLayout.database(dataDir));
    const runs = new RunRepo(db);
    const responses = new ResponseRepo(db);
    for (const [id, rows] of [['run-a', A], ['run-b', B]] as const) {
      runs.create({ ...sampleRun(id), total: rows.length });
      runs.markRunning(id);
      const stored: StoredResponse[] = rows.map(({ strictPass: _s, loosePass: _l, ...r }) => r);
      responses.insertBatch(id, stored, { generatedTokens: 3, wallMs: 1, peakMemoryBytes: 0, peakMemoryScope: null, h2dBytes: 0 });
      runs.finish(id, 'completed');
    }
    db.close();
  });
  afterAll(() => rm(dataDir, { recursive: true, force: true }));

  it('is listed by horizon --help', async () => {
    const r = await captureConsole(() => main(['--help']));
    expect(r.out).toMatch(/^ {2}compare {4}compare two runs over the prompts both scored \(paired counts, McNemar p, bootstrap interval\), or two campaigns$/m);
  });

  it('prints the JSON the issue names, from the stored runs', async () => {
    const r = await captureConsole(() => run(['run-a', 'run-b', '--json', '--data-dir', dataDir]));
    expect(r.code).toBe(0);
    const j = JSON.parse(r.out) as Record<string, unknown>;
    expect(Object.keys(j)).toEqual(expect.arrayContaining(['common', 'promptStrict', 'promptLoose', 'instructionStrict', 'instructionLoose', 'identicalResponses']));
    expect(j).toMatchObject({ common: 5, identicalResponses: 2, promptStrict: { bothPass: 1, regressions: 2, improvements: 1, bothFail: 1 } });
    expect((j.promptStrict as { ci95: number[] }).ci95).toHaveLength(2);
    expect(j.byInstructionType).toHaveLength(2);
  });

  it('prints a table and the strict regressions and improvements as text', async () => {
    const r = await captureConsole(() => run(['run-a', 'run-b', '--data-dir', dataDir]));
    expect(r.code).toBe(0);
    expect(r.out).toContain('5 prompts scored in both (2 with identical responses)');
    expect(r.out).toMatch(/prompt strict +n {4}5 {2}A {2}60\.0% {2}B {2}40\.0% {2}B-A {2}-20\.0 pt/);
    expect(r.out).toContain('reading (prompt strict): no significant difference (B regresses 2 prompts, improves 1, p = 1.00)');
    expect(r.out).toContain('strict regressions (A passes, B fails): #3, #4\nstrict improvements (A fails, B passes): #5');
    expect(r.out).toMatch(/by type, over the same prompts:\n {2}kind:0 {2}n {4}5 {2}A {2}60\.0% {2}B {2}60\.0% {2}regressions 1, improvements 1\n {2}kind:1 {2}n {4}3 {2}A 100\.0% {2}B {2}66\.7% {2}regressions 1, improvements 0/);
  });

  it('shows one prompt\'s two responses with --key: verdicts, the words both share, each side from where they part', async () => {
    const r = await captureConsole(() => run(['run-a', 'run-b', '--key', '4', '--data-dir', dataDir]));
    expect(r).toMatchObject({ code: 0, errOut: '' });
    expect(r.out.split('\n')).toEqual([
      '#4: A strict pass, loose pass  ->  B strict FAIL, loose pass',
      'instructions (A -> B):',
      '  kind:0  strict pass -> pass  loose pass -> pass',
      '  kind:1  strict pass -> FAIL  loose pass -> pass',
      'prompt:',
      '  prompt 4',
      'both responses start with these 2 words:',
      '  One two',
      'A from there:',
      '  three.',
      'B from there:',
      '  four, five.',
    ]);
    const differ = await captureConsole(() => run(['run-a', 'run-b', '--key', '3', '--data-dir', dataDir]));
    expect(differ.out.split('\n').slice(-5)).toEqual(['the responses differ from their first word', 'A:', '  a3', 'B:', '  b3']);
    const same = await captureConsole(() => run(['run-a', 'run-b', '--key', '2', '--data-dir', dataDir]));
    expect(same.out.split('\n').slice(-2)).toEqual(['the two responses are the same text:', '  same']);
    const json = JSON.parse((await captureConsole(() => run(['run-a', 'run-b', '--key', '4', '--json', '--data-dir', dataDir]))).out) as unknown;
    expect(json).toEqual({
      key: 4,
      prompt: 'prompt 4',
      a: { response: 'One two\nthree.', strictPass: true, loosePass: true, verdicts: [{ instructionId: 'kind:0', strict: true, loose: true }, { instructionId: 'kind:1', strict: true, loose: true }] },
      b: { response: 'One two\nfour, five.', strictPass: false, loosePass: true, verdicts: [{ instructionId: 'kind:0', strict: true, loose: true }, { instructionId: 'kind:1', strict: false, loose: true }] },
      divergence: { at: 8, words: 2 },
    });
    // A key only one run scored, and one that is no key.
    expect(await captureConsole(() => run(['run-a', 'run-b', '--key', '1', '--data-dir', dataDir]))).toMatchObject({ code: 1, errOut: 'horizon compare: run-b has no response for key 1' });
    expect(await captureConsole(() => run(['run-a', 'run-b', '--key', 'x1', '--data-dir', dataDir]))).toMatchObject({
      code: 2,
      errOut: expect.stringMatching(/^horizon compare: --key takes a prompt's key, a whole number, not "x1"\n/),
    });
  });

  it('refuses a wrong argument count and an unknown run', async () => {
    expect(await captureConsole(() => run(['run-a', '--data-dir', dataDir]))).toMatchObject({ code: 2 });
    expect(await captureConsole(() => run(['run-a', 'nope', '--data-dir', dataDir]))).toMatchObject({
      code: 1,
      errOut: expect.stringContaining('horizon compare: no run or campaign nope in '),
    });
  });
});
