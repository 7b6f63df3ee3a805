import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { run } from '../../../../../electron/cli/commands/show.js';
import { dataLayout } from '../../../../../electron/main/data-dir.js';
import { openDatabase } from '../../../../../electron/main/db/open-database.js';
import { PerfRepo } from '../../../../../electron/main/db/perf-repo.js';
import { importPerfZip } from '../../../../../electron/main/export/import-perf-zip.js';
import { loadTextTools } from '../../../../../evals/ifeval/node/load-text-tools.js';
import { writeElsewhereCampaignZip } from '../../main/export/perf-fixtures.js';
import { storeRun } from '../../main/export/zip-fixtures.js';
import { captureConsole } from '../capture-console.js';

const SHARED = path.resolve(import.meta.dirname, '..', '..', '..', '..', '..', '..', 'shared');
const PUNKT = path.join(SHARED, 'nltk', 'punkt_english');

/**
 * The first three official prompts: 1000 (no commas, 3 highlighted sections, at least 300 words), 1001 (no commas),
 * 1005 (12 placeholders). 1000's answer has one comma and two highlights; 1001's none; 1005's one placeholder.
 */
const ANSWERS = ['Yes, *one* and *two*.', 'No commas here.', 'Fill [name] in.'];

describe('horizon show', () => {
  let dataDir: string;
  const show = (args: string[]) => captureConsole(() => run([...args, '--data-dir', dataDir, '--punkt', PUNKT]));

  beforeAll(async () => {
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'horizon-cli-show-'));
    const tools = await loadTextTools({ punktDir: PUNKT });
    const official = readFileSync(path.join(SHARED, 'ifeval', 'input_data.jsonl'), 'utf8');
    const db = openDatabase(dataLayout.database(dataDir));
    const { runs } = storeRun(db, 'run-a', official, 3, ANSWERS, tools, 'completed');
    runs.setLabel('run-a', 'baseline g32');
    // run-b: the same answers, 1000 and 1005 cut at its 16 new tokens.
    storeRun(db, 'run-b', official, 3, ANSWERS, tools, 'completed');
    db.prepare("UPDATE responses SET finish_reason = 'length', tokens = 16 WHERE run_id = 'run-b' AND key IN (1000, 1005)").run();
    // run-c: 1000 without its comma, so it passes punctuation:no_comma and still fails as a prompt.
    storeRun(db, 'run-c', official, 3, ['Yes *one* and *two*.', ...ANSWERS.slice(1)], tools, 'completed');
    // A colleague's campaign: one request at 25 tok/s, TTFT 40 ms, response 5.1 s.
    await writeElsewhereCampaignZip('perf-elsewhere', path.join(dataDir, 'perf.zip'), { label: 'driver 580' });
    await importPerfZip(path.join(dataDir, 'perf.zip'), { perf: new PerfRepo(db), db });
    db.close();
  });
  afterAll(() => rm(dataDir, { recursive: true, force: true }));

  it('shows the run: what it ran, its accuracies and each instruction\'s pass counts', async () => {
    const r = await show(['run-a']);
    expect(r).toMatchObject({ code: 0, errOut: '' });
    const lines = r.out.split('\n');
    // storeRun's sample run: horizon/tiny at a commit of a's, INT4, on the CPU, 16 new tokens, batch 2.
    expect(lines.slice(0, 5)).toEqual([
      'run run-a "baseline g32"',
      '  status    completed, 3 of 3 prompts scored',
      '  model     horizon/tiny @ aaaaaaa, INT4 (tiny@abc/int4)',
      '  device    CPU backend, host',
      '  settings  greedy, max new tokens 16, batch 2',
    ]);
    // One prompt of three passes (1001), and one instruction of five (its no-comma one).
    expect(lines[6]).toBe('  endings   3 ended by the model, 0 cut at max new tokens (16)');
    expect(r.out).toContain('prompt-level:      strict 33.33%  loose 33.33%');
    expect(r.out).toContain('instruction-level: strict 20.00%  loose 20.00%');
    // 95% intervals, worked by hand: prompts 1 of 3 (Wilson); instructions 0 of 3, 1 of 1, 0 of 1: p = 1/5, residuals
    // -0.6, 0.8, -0.2, variance 3/2 * 1.04 / 25 = 0.0624, effective trials 0.16 / 0.0624 = 2.56 (Wilson over those).
    expect(r.out).toContain([
      '95% intervals (prompts: Wilson; instructions: clustered by prompt):',
      '  prompt-level:      strict 6.1-79.2%  loose 6.1-79.2%',
      '  instruction-level: strict 2.2-73.8%  loose 2.2-73.8%',
    ].join('\n'));
    // Each type's strict Wilson interval, worked by hand: 0 of 1 -> 0-79.3%, 1 of 2 -> 9.5-90.5%.
    expect(lines.slice(lines.indexOf('by instruction (strict, loose, of n; strict 95% interval, as the chart draws it):') + 1)).toEqual([
      '  detectable_content:number_placeholders           0.0%    0.0%  n   1  0.0-79.3%',
      '  detectable_format:number_highlighted_sections    0.0%    0.0%  n   1  0.0-79.3%',
      '  length_constraints:number_words                  0.0%    0.0%  n   1  0.0-79.3%',
      '  punctuation:no_comma                            50.0%   50.0%  n   2  9.5-90.5%',
    ]);
    const json = await show(['run-a', '--json']);
    expect(JSON.parse(json.out)).toMatchObject({ id: 'run-a', label: 'baseline g32', done: 3, total: 3, accuracies: { promptStrict: 1 / 3 } });
  });

  it('shows one response with what decided each verdict, then its prompt and text', async () => {
    const r = await show(['run-a', '--key', '1000']);
    expect(r).toMatchObject({ code: 0, errOut: '' });
    expect(r.out.split('\n').slice(0, 8)).toEqual([
      'response 1000 of run run-a: strict FAIL, loose FAIL; 7 tokens, ended by the model, TTFT 12 ms, 50.0 tok/s',
      'instructions:',
      '  strict FAIL  loose FAIL  punctuation:no_comma',
      '      1 comma; needs none',
      '  strict FAIL  loose FAIL  detectable_format:number_highlighted_sections (num_highlights=3)',
      '      2 highlighted sections; needs at least 3',
      '  strict FAIL  loose FAIL  length_constraints:number_words (relation="at least", num_words=300)',
      '      4 words; needs at least 300',
    ]);
    expect(r.out).toMatch(/\nprompt:\n {2}Write a 300\+ word summary .*\nresponse:\n {2}Yes, \*one\* and \*two\*\.$/);
    const json = JSON.parse((await show(['run-a', '--key', '1001', '--json'])).out) as { strictPass: boolean; verdicts: { finding: string }[] };
    expect(json).toMatchObject({ key: 1001, strictPass: true, loosePass: true, verdicts: [{ instructionId: 'punctuation:no_comma', finding: '0 commas; needs none' }] });
  });

  it('lists the failures, one line per failing instruction, or one instruction\'s', async () => {
    const r = await show(['run-a', '--failed', 'strict']);
    expect(r).toMatchObject({ code: 0, errOut: '' });
    expect(r.out.split('\n')).toEqual([
      '#1000  punctuation:no_comma: 1 comma; needs none',
      '#1000  detectable_format:number_highlighted_sections: 2 highlighted sections; needs at least 3',
      '#1000  length_constraints:number_words: 4 words; needs at least 300',
      '#1005  detectable_content:number_placeholders: 1 bracketed placeholder; needs at least 12',
      '2 of the 3 responses fail strict; horizon show run-a --key K shows one',
    ]);
    const one = await show(['run-a', '--failed', 'loose', '--instruction', 'punctuation:no_comma']);
    expect(one.out.split('\n')).toEqual([
      '#1000  punctuation:no_comma: 1 comma; needs none',
      '1 of the 2 responses with punctuation:no_comma fail loose on it; horizon show run-a --key K shows one',
    ]);
    const json = JSON.parse((await show(['run-a', '--failed', 'loose', '--instruction', 'punctuation:no_comma', '--json'])).out) as unknown;
    expect(json).toEqual({
      mode: 'loose', instructionId: 'punctuation:no_comma', ending: null, total: 2,
      failed: [{ key: 1000, instructions: [{ instructionId: 'punctuation:no_comma', kwargs: {}, strict: false, loose: false, finding: '1 comma; needs none', looseFinding: null }] }],
    });
  });

  it('lists the responses that ended one way, and the failures among them', async () => {
    const cut = await show(['run-b', '--ending', 'length']);
    expect(cut).toMatchObject({ code: 0, errOut: '' });
    expect(cut.out.split('\n')).toEqual([
      '#1000  16 tokens  strict FAIL  loose FAIL',
      '#1005  16 tokens  strict FAIL  loose FAIL',
      '2 of the 3 responses cut at max new tokens (16); horizon show run-b --key K shows one',
    ]);
    const stopped = await show(['run-b', '--ending', 'stop', '--instruction', 'punctuation:no_comma']);
    expect(stopped.out.split('\n')).toEqual([
      '#1001  7 tokens  strict pass  loose pass  0 commas; needs none',
      '1 of the 2 responses with punctuation:no_comma ended by the model (verdicts on punctuation:no_comma); horizon show run-b --key K shows one',
    ]);
    expect((await show(['run-a', '--ending', 'cancelled'])).out).toBe('0 of the 3 responses cancelled; horizon show run-a --key K shows one');
    // --json: the app's response rows.
    expect(JSON.parse((await show(['run-b', '--ending', 'length', '--json'])).out)).toMatchObject({
      ending: 'length', instructionId: null, total: 3,
      responses: [
        { key: 1000, tokens: 16, finishReason: 'length', strictPass: false, loosePass: false, responsePreview: ANSWERS[0], instructionIds: { length: 3 } },
        { key: 1005, tokens: 16, finishReason: 'length', strictPass: false, loosePass: false, responsePreview: ANSWERS[2] },
      ],
    });

    const failedCut = await show(['run-b', '--failed', 'strict', '--ending', 'length', '--instruction', 'punctuation:no_comma']);
    expect(failedCut.out.split('\n')).toEqual([
      '#1000  punctuation:no_comma: 1 comma; needs none',
      '1 of the 1 response with punctuation:no_comma cut at max new tokens (16) fail strict on it; horizon show run-b --key K shows one',
    ]);
    const failedStopped = JSON.parse((await show(['run-b', '--failed', 'strict', '--ending', 'stop', '--json'])).out) as unknown;
    expect(failedStopped).toEqual({ mode: 'strict', instructionId: null, ending: 'stop', total: 1, failed: [] });
  });

  it("lists an instruction's responses with its own verdicts there and what decided them", async () => {
    // 1000 fails as a prompt and on its comma; 1001 passes. Cut responses say so when no ending is asked for.
    const r = await show(['run-b', '--instruction', 'punctuation:no_comma']);
    expect(r).toMatchObject({ code: 0, errOut: '' });
    expect(r.out.split('\n')).toEqual([
      '#1000  16 tokens, cut  strict FAIL  loose FAIL  1 comma; needs none',
      '#1001   7 tokens  strict pass  loose pass  0 commas; needs none',
      '2 of the 2 responses with punctuation:no_comma (verdicts on punctuation:no_comma); horizon show run-b --key K shows one',
    ]);
    // run-c's 1000 fails as a prompt (its highlights and length) and passes punctuation:no_comma: the line gives the
    // instruction's verdict, the JSON both.
    expect((await show(['run-c', '--instruction', 'punctuation:no_comma'])).out.split('\n')[0]).toBe('#1000  7 tokens  strict pass  loose pass  0 commas; needs none');
    const json = JSON.parse((await show(['run-c', '--instruction', 'punctuation:no_comma', '--json'])).out) as { responses: unknown[] };
    expect(json).toMatchObject({ ending: null, instructionId: 'punctuation:no_comma', total: 2 });
    expect(json.responses[0]).toMatchObject({
      key: 1000, tokens: 7, finishReason: 'stop', strictPass: false, loosePass: false,
      instructionVerdict: { instructionId: 'punctuation:no_comma', strictPass: true, loosePass: true, finding: '0 commas; needs none' },
    });
  });

  it('shows a stored campaign as horizon perf prints it', async () => {
    const r = await show(['--campaign', 'perf-elsewhere']);
    expect(r).toMatchObject({ code: 0, errOut: '' });
    expect(r.out.split('\n')).toEqual([
      'campaign perf-elsewhere "driver 580" completed — m@abc/int4-g32 on CPU (cpu)',
      expect.stringMatching(/^ {2}imported from .*perf\.zip at \d{4}-\d\d-\d\dT/),
      '  1 prompts × 1 blocks, 128 new tokens, EOS suppressed, warm-up 64 tokens excluded',
      '  configuration          decode tok/s  TTFT p50 ms  response p50 ms  peak GPU memory  H2D GB   expert hits/misses',
      '  full residency                 25.0           40             5100       n/a on CPU     n/a   n/a',
    ]);
    const json = JSON.parse((await show(['--campaign', 'perf-elsewhere', '--json'])).out) as unknown;
    expect(json).toMatchObject({ id: 'perf-elsewhere', label: 'driver 580', aggregates: [{ decodeTokensPerSecond: 25 }], requests: [{ key: 1000 }] });
    expect(await show(['--campaign', 'perf-nope'])).toMatchObject({
      code: 1,
      errOut: `horizon show: campaign perf-nope not found in ${dataLayout.database(dataDir)} (see horizon perf --list)`,
    });
    // A run is not a campaign.
    expect(await show(['--campaign', 'run-a'])).toMatchObject({ code: 1, errOut: expect.stringContaining('campaign run-a not found') });
  });

  it('shows the verdicts alone, saying why, without the Punkt parameters', async () => {
    const r = await captureConsole(() => run(['run-a', '--key', '1001', '--data-dir', dataDir, '--punkt', path.join(dataDir, 'no-punkt')]));
    expect(r.code).toBe(0);
    expect(r.errOut).toMatch(/^horizon show: verdicts shown without what decided them: .*no-punkt/);
    expect(r.out.split('\n').slice(1, 3)).toEqual(['instructions:', '  strict pass  loose pass  punctuation:no_comma']);
  });

  it.each([
    [['run-a', '--key', '1000', '--failed', 'strict'], '--key and --failed are two views: give one'],
    [['run-a', '--key', '10a'], '--key takes a prompt\'s key, a whole number, not "10a"'],
    [['run-a', '--failed', 'both'], '--failed takes strict or loose, not "both"'],
    [['run-a', '--key', '1000', '--instruction', 'punctuation:no_comma'], '--key and --instruction are two views: give one'],
    [['run-a', '--key', '1000', '--ending', 'stop'], '--key and --ending are two views: give one'],
    [['run-a', '--ending', 'cut'], '--ending takes stop, length, cancelled, not "cut"'],
    [['run-a', 'run-b'], 'give exactly one RUN_ID'],
    [['--campaign'], 'give exactly one CAMPAIGN_ID'],
    [['--campaign', 'perf-elsewhere', '--failed', 'strict'], '--failed is about a run\'s responses; a campaign has none'],
  ])('refuses %j with the usage', async (args, message) => {
    const r = await show(args);
    expect(r.code).toBe(2);
    expect(r.errOut.split('\n')[0]).toBe(`horizon show: ${message}`);
  });

  it('names what it did not find', async () => {
    expect(await show(['run-z'])).toMatchObject({ code: 1, errOut: expect.stringMatching(/^horizon show: run run-z not found in .*runmap\.sqlite \(see horizon export --list\)$/) });
    expect(await show(['run-a', '--key', '4'])).toMatchObject({ code: 1, errOut: 'horizon show: run run-a has no response for key 4' });
    expect(await show(['run-a', '--failed', 'strict', '--instruction', 'keywords:existence'])).toMatchObject({
      code: 1,
      errOut: 'horizon show: no response of run run-a has the instruction keywords:existence',
    });
    const none = await captureConsole(() => run(['run-a', '--data-dir', path.join(dataDir, 'elsewhere')]));
    expect(none).toMatchObject({ code: 1, errOut: expect.stringContaining('no database at') });
  });
});
