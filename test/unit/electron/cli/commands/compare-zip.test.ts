import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { run } from '../../../../../electron/cli/commands/compare.js';
import { dataLayout } from '../../../../../electron/main/data-dir.js';
import { openDatabase } from '../../../../../electron/main/db/open-database.js';
import { readZipEntries } from '../../../../../electron/main/export/verify-result-zip.js';
import { writeResultZip } from '../../../../../electron/main/export/write-result-zip.js';
import { loadTextTools } from '../../../../../evals/ifeval/node/load-text-tools.js';
import { captureConsole } from '../../cli/capture-console.js';
import { writeElsewhereCampaignZip } from '../../main/export/perf-fixtures.js';
import { manifestOf, rezip, setManifest, sha256, storeRun } from '../../main/export/zip-fixtures.js';

const SHARED = path.resolve(import.meta.dirname, '..', '..', '..', '..', '..', '..', 'shared');

// The first three official prompts: 1000 (no commas, 3 highlighted sections, 300+ words), 1001 (no commas),
// 1005 (12 placeholders). A keeps 1000's and 1001's commas out, B puts one in each; both leave 1005 unanswered in
// the same words. Strict and loose agree on one-line answers.
const ANSWERS_A = ['A plain answer.', 'No commas here.', 'none'];
const ANSWERS_B = ['Yes, a comma.', 'One, two.', 'none'];

describe('horizon compare with result ZIPs', () => {
  let dir: string;
  let dataDir: string;
  const zipA = () => path.join(dir, 'a.zip');
  const zipB = () => path.join(dir, 'b.zip');
  const json = async (a: string, b: string) => {
    const r = await captureConsole(() => run([a, b, '--json', '--data-dir', dataDir]));
    expect(r.errOut).toBe('');
    expect(r.code).toBe(0);
    return JSON.parse(r.out) as Record<string, unknown>;
  };
  const withoutNames = ({ runA: _a, runB: _b, ...rest }: Record<string, unknown>) => rest;

  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'horizon-cli-compare-zip-'));
    dataDir = path.join(dir, 'data');
    const official = readFileSync(path.join(SHARED, 'ifeval', 'input_data.jsonl'), 'utf8');
    const tools = await loadTextTools({ punktDir: path.join(SHARED, 'nltk', 'punkt_english') });
    const db = openDatabase(dataLayout.database(dataDir));
    for (const [id, answers, out] of [['run-a', ANSWERS_A, zipA()], ['run-b', ANSWERS_B, zipB()]] as const) {
      const repos = storeRun(db, id, official, 3, answers, tools, 'completed');
      if (id === 'run-b') {
        repos.runs.setLabel(id, 'with commas');
        db.prepare("UPDATE responses SET finish_reason = 'length' WHERE run_id = 'run-b' AND key = 1005").run();
      }
      await writeResultZip({ ...repos, inputDataText: official, tools }, id, out);
    }
    db.close();
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it('compares two ZIPs by their re-scored verdicts, counted by hand', async () => {
    const j = await json(zipA(), zipB());
    expect(j).toMatchObject({
      runA: zipA(),
      runB: zipB(),
      labelA: null,
      labelB: 'with commas',
      // storeRun's runs cap at 16 new tokens; B's 1005 was cut.
      cutA: { cut: 0, of: 3, maxNewTokens: 16 },
      cutB: { cut: 1, of: 3, maxNewTokens: 16 },
      common: 3,
      identicalResponses: 1,
      instructionMismatches: 0,
      // Prompts: 1001 passes in A only; 1000 and 1005 fail in both.
      promptStrict: { n: 3, bothPass: 0, regressions: 1, improvements: 0, bothFail: 2 },
      promptLoose: { n: 3, bothPass: 0, regressions: 1, improvements: 0, bothFail: 2 },
      // Instructions: the two no-comma ones pass in A only; 1000's other two and 1005's fail in both.
      instructionStrict: { n: 5, bothPass: 0, regressions: 2, improvements: 0, bothFail: 3 },
    });
    expect(j.byInstructionType).toContainEqual({
      instructionId: 'punctuation:no_comma', n: 2, strictA: 2, strictB: 0, looseA: 2, looseB: 0, strictRegressions: 2, strictImprovements: 0,
    });
    expect((j.changed as { key: number }[]).map((c) => c.key)).toEqual([1001]);
  });

  it('gives the same comparison from the ZIPs, the stored runs, or one of each, labels included', async () => {
    const stored = withoutNames(await json('run-a', 'run-b'));
    expect(stored).toMatchObject({ labelA: null, labelB: 'with commas' });
    expect(withoutNames(await json(zipA(), zipB()))).toEqual(stored);
    expect(withoutNames(await json('run-a', zipB()))).toEqual(stored);
    expect(withoutNames(await json(zipA(), 'run-b'))).toEqual(stored);
  });

  it('needs no database when both sides are ZIPs', async () => {
    const r = await captureConsole(() => run([zipA(), zipB(), '--db', path.join(dir, 'no-such.sqlite'), '--data-dir', dataDir]));
    expect(r).toMatchObject({ code: 0, errOut: '' });
    expect(r.out.split('\n').slice(0, 2)).toEqual([
      `A ${zipA()}  ->  B ${zipB()} "with commas": 3 prompts scored in both (1 with identical responses)`,
      '  cut at max new tokens (whole run): A 0 of 3 at 16, B 1 of 3 at 16',
    ]);
    expect(r.out).toContain('strict regressions (A passes, B fails): #1001');
  });

  it('refuses a ZIP that does not verify, and a campaign ZIP, naming them', async () => {
    const entries = await readZipEntries(zipB());
    const lines = entries.get('eval_results_strict.jsonl')!.toString().split('\n');
    lines[1] = lines[1]!.replace('"follow_instruction_list": [false]', '"follow_instruction_list": [true]');
    entries.set('eval_results_strict.jsonl', Buffer.from(lines.join('\n')));
    const m = manifestOf(entries);
    const f = m.files.find((x) => x.name === 'eval_results_strict.jsonl')!;
    f.sha256 = sha256(entries.get('eval_results_strict.jsonl')!);
    f.bytes = entries.get('eval_results_strict.jsonl')!.length;
    setManifest(entries, m);
    const bad = path.join(dir, 'bad.zip');
    await rezip(entries, bad);
    expect(await captureConsole(() => run([zipA(), bad, '--data-dir', dataDir]))).toMatchObject({
      code: 1,
      out: '',
      errOut: `horizon compare: ${bad} is NOT verified (1 problem; horizon verify ${bad} lists them)`,
    });

    const campaign = path.join(dir, 'campaign.zip');
    await writeElsewhereCampaignZip('perf-x', campaign);
    expect(await captureConsole(() => run([campaign, zipB(), '--data-dir', dataDir]))).toMatchObject({
      code: 1,
      errOut: `horizon compare: ${zipB()} is a run and ${campaign} a campaign: compare runs with runs, campaigns with campaigns`,
    });
  });
});
