import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

import Database from 'better-sqlite3';
import { ZipFile } from 'yazl';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { migrate } from '../../../../../electron/main/db/open-database.js';
import { ResponseRepo } from '../../../../../electron/main/db/response-repo.js';
import { RunRepo } from '../../../../../electron/main/db/run-repo.js';
import { readZipEntries, verifyResultZip } from '../../../../../electron/main/export/verify-result-zip.js';
import { writeResultZip } from '../../../../../electron/main/export/write-result-zip.js';
import { OFFICIAL_INPUT_SHA256, parsePromptRecords } from '../../../../../evals/ifeval/dataset.js';
import { loadTextTools } from '../../../../../evals/ifeval/node/load-text-tools.js';
import { scorePrompt } from '../../../../../evals/ifeval/score.js';
import type { TextTools } from '../../../../../evals/ifeval/text/text-tools.js';
import { sampleRun } from '../db/sample-run.js';

const shared = path.resolve(import.meta.dirname, '..', '..', '..', '..', '..', '..', 'shared');
const sha256 = (b: Buffer | string) => createHash('sha256').update(b).digest('hex');

async function rezip(entries: Map<string, Buffer>, out: string): Promise<void> {
  const zip = new ZipFile();
  for (const [name, b] of entries) zip.addBuffer(b, name);
  zip.end();
  const chunks: Buffer[] = [];
  for await (const c of zip.outputStream) chunks.push(c as Buffer);
  await writeFile(out, Buffer.concat(chunks));
}

function setManifestHash(entries: Map<string, Buffer>, name: string): void {
  const m = JSON.parse(entries.get('manifest.json')!.toString()) as { files: { name: string; sha256: string; bytes: number }[] };
  const f = m.files.find((x) => x.name === name)!;
  f.sha256 = sha256(entries.get(name)!);
  f.bytes = entries.get(name)!.length;
  entries.set('manifest.json', Buffer.from(JSON.stringify(m)));
}

type Manifest = { run: Record<string, unknown>; files: { name: string; sha256: string; bytes: number }[] };
const manifestOf = (entries: Map<string, Buffer>) => JSON.parse(entries.get('manifest.json')!.toString()) as Manifest;
const setManifest = (entries: Map<string, Buffer>, m: Manifest) => entries.set('manifest.json', Buffer.from(JSON.stringify(m)));

/** Stores a run of `total` prompts over `inputText` with the first answers given, finishes it and writes its ZIP. */
async function writeRun(runId: string, inputText: string, total: number, answers: readonly string[], tools: TextTools, out: string) {
  const records = parsePromptRecords(inputText, 'input');
  const db = new Database(':memory:');
  migrate(db);
  const runs = new RunRepo(db);
  const responses = new ResponseRepo(db);
  runs.create({ ...sampleRun(runId), total, datasetSha256: sha256(inputText) });
  responses.insertBatch(
    runId,
    records.slice(0, answers.length).map((rec, i) => {
      const v = scorePrompt(rec, answers[i]!, tools);
      return {
        key: rec.key, position: i, prompt: rec.prompt, response: answers[i]!, tokens: 7, finishReason: 'stop' as const,
        ttftMs: 12, decodeTokensPerSecond: 50,
        verdicts: rec.instruction_id_list.map((id, j) => ({ instructionId: id, kwargs: rec.kwargs[j] ?? {}, strict: v.strict[j]!, loose: v.loose[j]! })),
      };
    }),
    { generatedTokens: 7 * answers.length, wallMs: 1000, peakVramBytes: 0, peakVramScope: null, h2dBytes: 0 },
  );
  runs.finish(runId, 'cancelled');
  const written = await writeResultZip({ runs, responses, inputDataText: inputText }, runId, out);
  expect(written.sha256).toBe(sha256(readFileSync(out)));
  return out;
}

describe('result ZIP: write and verify', () => {
  let dir: string;
  let tools: TextTools;
  let good: string;
  let inputText: string;

  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'horizon-zip-'));
    tools = await loadTextTools({ punktDir: path.join(shared, 'nltk', 'punkt_english') });
    const lines = readFileSync(path.join(shared, 'ifeval', 'input_data.jsonl'), 'utf8').split('\n').filter(Boolean);
    const pick = lines.slice(0, 40).filter((l) => !l.includes('language:response_language')).slice(0, 6);
    inputText = `${pick.join('\n')}\n`;
    const answers = ['A plain answer without commas.', 'Yes, a comma.', 'THE END', 'hello\nworld'];
    good = await writeRun('run-z', inputText, 5, answers, tools, path.join(dir, 'out', 'good.zip'));
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it('writes the seven files with a manifest hashing the other six', async () => {
    const entries = await readZipEntries(good);
    expect([...entries.keys()]).toEqual([
      'manifest.json', 'responses.jsonl', 'input_data.jsonl', 'eval_results_strict.jsonl', 'eval_results_loose.jsonl', 'summary.json', 'performance.json',
    ]);
    const m = JSON.parse(entries.get('manifest.json')!.toString()) as Record<string, unknown> & { files: { name: string; sha256: string }[] };
    expect(m).toMatchObject({ format: 'horizon-result-v1', run: { id: 'run-z', responses: 4, total: 5 }, model: { repo: 'horizon/tiny', manifest: { files: [] } } });
    for (const f of m.files) expect(f.sha256).toBe(sha256(entries.get(f.name)!));
    expect(entries.get('input_data.jsonl')!.toString()).toBe(`${inputText.split('\n').slice(0, 5).join('\n')}\n`);
    const first = JSON.parse(entries.get('responses.jsonl')!.toString().split('\n')[0]!) as Record<string, unknown>;
    expect(Object.keys(first)).toEqual(['key', 'prompt', 'response', 'tokens', 'finish_reason', 'timings']);
    expect(entries.get('eval_results_strict.jsonl')!.toString()).toMatch(/^\{"follow_all_instructions": (true|false), "follow_instruction_list": \[/);
    const perf = JSON.parse(entries.get('performance.json')!.toString()) as Record<string, unknown>;
    expect(perf).toMatchObject({ backend: 'CPU', generated_tokens: 28, overall_tokens_per_second: 28, peak_vram_bytes: null });
  });

  it('reads back clean with unzip -t', () => {
    let out: string;
    try {
      out = execFileSync('unzip', ['-t', good], { encoding: 'utf8' });
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return expect.fail('unzip is not installed (apt-get install unzip)');
      throw e;
    }
    expect(out).toMatch(/No errors detected/);
  });

  it('verifies a good ZIP', async () => {
    const r = await verifyResultZip(good, tools);
    expect(r.problems).toEqual([]);
    expect(r.verified).toBe(true);
    expect(r.accuracies?.promptStrict).toBeGreaterThanOrEqual(0);
    // The fixture run was cancelled part-way: the report says so.
    expect(r.run).toMatchObject({ status: 'cancelled' });
    expect(r.run!.responses).toBeLessThan(r.run!.total);
  });

  it('fails a tampered file whose hash was not updated, naming the file and both hashes', async () => {
    const entries = await readZipEntries(good);
    entries.set('performance.json', Buffer.from('{"wall_seconds": 0.001}\n'));
    const bad = path.join(dir, 'hash.zip');
    await rezip(entries, bad);
    const r = await verifyResultZip(bad, tools);
    expect(r.verified).toBe(false);
    expect(r.problems).toContainEqual(expect.stringMatching(/^performance\.json: sha256 is [0-9a-f]{64}, manifest\.json says [0-9a-f]{64}$/));
  });

  it('fails a tampered response even with a consistent hash, naming the line and key', async () => {
    const entries = await readZipEntries(good);
    const lines = entries.get('responses.jsonl')!.toString().split('\n');
    const row = JSON.parse(lines[1]!) as { key: number; response: string };
    row.response = 'Yes a comma removed.';
    lines[1] = JSON.stringify(row);
    entries.set('responses.jsonl', Buffer.from(lines.join('\n')));
    setManifestHash(entries, 'responses.jsonl');
    const bad = path.join(dir, 'response.zip');
    await rezip(entries, bad);
    const r = await verifyResultZip(bad, tools);
    expect(r.verified).toBe(false);
    expect(r.problems).toContain(`eval_results_strict.jsonl line 2 (key ${row.key}): response differs from responses.jsonl`);
  });

  it('fails a tampered summary, naming the field and both values', async () => {
    const entries = await readZipEntries(good);
    const summary = JSON.parse(entries.get('summary.json')!.toString()) as Record<string, number>;
    const real = summary.promptLevelStrictAccuracy!;
    summary.promptLevelStrictAccuracy = 0.99;
    entries.set('summary.json', Buffer.from(JSON.stringify(summary)));
    setManifestHash(entries, 'summary.json');
    const bad = path.join(dir, 'summary.zip');
    await rezip(entries, bad);
    const r = await verifyResultZip(bad, tools);
    expect(r.problems).toEqual([`summary.json: promptLevelStrictAccuracy is 0.99, re-scoring gives ${real}`]);
  });

  it('fails a flipped verdict in eval_results_loose.jsonl', async () => {
    const entries = await readZipEntries(good);
    const lines = entries.get('eval_results_loose.jsonl')!.toString().split('\n');
    lines[0] = lines[0]!.replace(/"follow_instruction_list": \[(true|false)/, (_m, v: string) => `"follow_instruction_list": [${v === 'true' ? 'false' : 'true'}`);
    entries.set('eval_results_loose.jsonl', Buffer.from(lines.join('\n')));
    setManifestHash(entries, 'eval_results_loose.jsonl');
    const bad = path.join(dir, 'loose.zip');
    await rezip(entries, bad);
    const r = await verifyResultZip(bad, tools);
    expect(r.problems.some((p) => /^eval_results_loose\.jsonl line 1 \(key \d+\): follow_instruction_list is \[/.test(p))).toBe(true);
  });

  it('records the whole dataset and the included rows separately in the manifest', async () => {
    const entries = await readZipEntries(good);
    const included = entries.get('input_data.jsonl')!;
    expect(manifestOf(entries).run).toMatchObject({
      datasetSha256: sha256(inputText),
      datasetRows: 6,
      included: { file: 'input_data.jsonl', rows: 5, sha256: sha256(included) },
    });
    expect(sha256(included)).not.toBe(sha256(inputText));
  });

  it('fails a tampered input row even when the files list was updated, naming both hashes', async () => {
    const entries = await readZipEntries(good);
    const before = sha256(entries.get('input_data.jsonl')!);
    const lines = entries.get('input_data.jsonl')!.toString().split('\n');
    const row = JSON.parse(lines[4]!) as { key: number; prompt: string };
    row.prompt += ' Also, end with a haiku.';
    lines[4] = JSON.stringify(row);
    entries.set('input_data.jsonl', Buffer.from(lines.join('\n')));
    setManifestHash(entries, 'input_data.jsonl');
    const bad = path.join(dir, 'input-row.zip');
    await rezip(entries, bad);
    const r = await verifyResultZip(bad, tools);
    expect(r.verified).toBe(false);
    expect(r.problems).toEqual([`input_data.jsonl: sha256 is ${sha256(entries.get('input_data.jsonl')!)}, manifest.json run.included.sha256 says ${before}`]);
  });

  it('fails an included file that lost a row, even with every hash updated', async () => {
    const entries = await readZipEntries(good);
    const lines = entries.get('input_data.jsonl')!.toString().split('\n');
    entries.set('input_data.jsonl', Buffer.from(`${lines.slice(0, 4).join('\n')}\n`));
    setManifestHash(entries, 'input_data.jsonl');
    const m = manifestOf(entries);
    m.run.included = { ...(m.run.included as object), sha256: sha256(entries.get('input_data.jsonl')!) };
    setManifest(entries, m);
    const bad = path.join(dir, 'input-short.zip');
    await rezip(entries, bad);
    const r = await verifyResultZip(bad, tools);
    expect(r.problems).toEqual([
      'input_data.jsonl: 4 rows, manifest.json run.included.rows says 5',
      'input_data.jsonl: 4 rows, but a run of 5 prompts over the 6-row dataset used 5',
    ]);
  });

  it('fails a response whose key is not among the included input rows', async () => {
    const entries = await readZipEntries(good);
    const lines = entries.get('responses.jsonl')!.toString().split('\n');
    const row = JSON.parse(lines[0]!) as { key: number };
    row.key = 999_999;
    lines[0] = JSON.stringify(row);
    entries.set('responses.jsonl', Buffer.from(lines.join('\n')));
    setManifestHash(entries, 'responses.jsonl');
    const bad = path.join(dir, 'response-key.zip');
    await rezip(entries, bad);
    const r = await verifyResultZip(bad, tools);
    expect(r.problems).toContain('responses.jsonl line 1: key 999999 is not in input_data.jsonl');
  });

  it('still verifies a ZIP written before the included rows were recorded', async () => {
    const entries = await readZipEntries(good);
    const m = manifestOf(entries);
    delete m.run.included;
    delete m.run.datasetRows;
    setManifest(entries, m);
    const old = path.join(dir, 'old.zip');
    await rezip(entries, old);
    expect((await verifyResultZip(old, tools)).problems).toEqual([]);
  });

  it('ties a whole-set run of the official 541 prompts to the official sha256', async () => {
    const official = readFileSync(path.join(shared, 'ifeval', 'input_data.jsonl'), 'utf8');
    expect(sha256(official)).toBe(OFFICIAL_INPUT_SHA256);
    const full = await writeRun('run-full', official, 541, ['One answer.', 'Another answer.'], tools, path.join(dir, 'full.zip'));
    const entries = await readZipEntries(full);
    expect(manifestOf(entries).run).toMatchObject({
      datasetSha256: OFFICIAL_INPUT_SHA256,
      datasetRows: 541,
      included: { rows: 541, sha256: OFFICIAL_INPUT_SHA256 },
    });
    expect((await verifyResultZip(full, tools)).problems).toEqual([]);

    // An unanswered row edited and every hash in the manifest updated: only the official pin catches it.
    const lines = entries.get('input_data.jsonl')!.toString().split('\n');
    lines[300] = lines[300]!.replace('"prompt": "', '"prompt": "Edited. ');
    entries.set('input_data.jsonl', Buffer.from(lines.join('\n')));
    setManifestHash(entries, 'input_data.jsonl');
    const edited = sha256(entries.get('input_data.jsonl')!);
    const m = manifestOf(entries);
    m.run.included = { ...(m.run.included as object), sha256: edited };
    setManifest(entries, m);
    const bad = path.join(dir, 'full-edited.zip');
    await rezip(entries, bad);
    expect((await verifyResultZip(bad, tools)).problems).toEqual([
      `input_data.jsonl: all 541 rows of the official IFEval set (manifest.json run.datasetSha256), but its sha256 is ${edited}, not the official ${OFFICIAL_INPUT_SHA256}`,
    ]);
  });

  it('reports an unreadable file clearly', async () => {
    const junk = path.join(dir, 'junk.zip');
    await writeFile(junk, 'not a zip');
    await expect(verifyResultZip(junk, tools)).rejects.toThrow(/junk\.zip: not a readable ZIP/);
  });
});
