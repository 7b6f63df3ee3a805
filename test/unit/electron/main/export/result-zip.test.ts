import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { ZipFile } from 'yazl';

import { migrate, openDatabase } from '../../../../../electron/main/db/open-database.js';
import { ResponseRepo } from '../../../../../electron/main/db/response-repo.js';
import { RunRepo } from '../../../../../electron/main/db/run-repo.js';
import { MAX_ENTRY_BYTES, readZipEntries, verifyResultZip } from '../../../../../electron/main/export/verify-result-zip.js';
import { writeResultZip } from '../../../../../electron/main/export/write-result-zip.js';
import { OFFICIAL_INPUT_SHA256, parsePromptRecords } from '../../../../../evals/ifeval/dataset.js';
import { loadTextTools } from '../../../../../evals/ifeval/node/load-text-tools.js';
import { scorePrompt } from '../../../../../evals/ifeval/score.js';
import type { TextTools } from '../../../../../evals/ifeval/text/text-tools.js';
import { sampleRun } from '../db/sample-run.js';
import { regenerate, rezip, sha256, storeRun } from './zip-fixtures.js';

const shared = path.resolve(import.meta.dirname, '..', '..', '..', '..', '..', '..', 'shared');
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

/** Sets the uncompressed size the central directory declares for `name`, leaving the data as it is. */
function declareSize(zip: Buffer, name: string, size: number): Buffer {
  const out = Buffer.from(zip);
  for (let at = out.lastIndexOf(Buffer.from([0x50, 0x4b, 0x05, 0x06])) - 1; at >= 0; at--) {
    if (out.readUInt32LE(at) !== 0x02014b50) continue;
    if (out.toString('utf8', at + 46, at + 46 + out.readUInt16LE(at + 28)) === name) {
      out.writeUInt32LE(size, at + 24);
      return out;
    }
  }
  throw new Error(`${name} not in the central directory`);
}

/** Stores a run of `total` prompts over `inputText` with the first answers given, finishes it and writes its ZIP. */
async function writeRun(
  runId: string,
  inputText: string,
  total: number,
  answers: readonly string[],
  tools: TextTools,
  out: string,
  status: 'completed' | 'cancelled' | 'failed' = 'cancelled',
) {
  const db = new Database(':memory:');
  migrate(db);
  const { runs, responses } = storeRun(db, runId, inputText, total, answers, tools, status);
  const written = await writeResultZip({ runs, responses, inputDataText: inputText, tools }, runId, out);
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

  it('writes the eight files with a manifest hashing the other seven', async () => {
    const entries = await readZipEntries(good);
    expect([...entries.keys()]).toEqual([
      'manifest.json', 'responses.jsonl', 'input_data.jsonl', 'eval_results_strict.jsonl', 'eval_results_loose.jsonl', 'findings.jsonl', 'summary.json',
      'performance.json',
    ]);
    const m = JSON.parse(entries.get('manifest.json')!.toString()) as Record<string, unknown> & { files: { name: string; sha256: string }[] };
    expect(m).toMatchObject({ format: 'horizon-result-v2', run: { id: 'run-z', responses: 4, total: 5 }, model: { repo: 'horizon/tiny', manifest: { files: [] } } });
    for (const f of m.files) expect(f.sha256).toBe(sha256(entries.get(f.name)!));
    expect(entries.get('input_data.jsonl')!.toString()).toBe(`${inputText.split('\n').slice(0, 5).join('\n')}\n`);
    const first = JSON.parse(entries.get('responses.jsonl')!.toString().split('\n')[0]!) as Record<string, unknown>;
    expect(Object.keys(first)).toEqual(['key', 'prompt', 'response', 'tokens', 'finish_reason', 'timings']);
    expect(entries.get('eval_results_strict.jsonl')!.toString()).toMatch(/^\{"follow_all_instructions": (true|false), "follow_instruction_list": \[/);
    const perf = JSON.parse(entries.get('performance.json')!.toString()) as Record<string, unknown>;
    expect(perf).toMatchObject({ backend: 'cpu', generated_tokens: 28, overall_tokens_per_second: 28, peak_memory_bytes: null });
  });

  it("writes each mode's own verdicts, the figures in seconds, and a model manifest that is not JSON as text", async () => {
    const db = new Database(':memory:');
    migrate(db);
    const runs = new RunRepo(db);
    const responses = new ResponseRepo(db);
    const rec = parsePromptRecords(inputText, 'input')[0]!;
    runs.create({ ...sampleRun('run-modes'), manifestJson: 'not json', total: 1, datasetSha256: sha256(inputText) });
    responses.insertBatch('run-modes', [{
      key: rec.key, position: 0, prompt: rec.prompt, response: 'r', tokens: 3, finishReason: 'stop', ttftMs: 1, decodeTokensPerSecond: 1,
      verdicts: rec.instruction_id_list.map((id) => ({ instructionId: id, kwargs: {}, strict: false, loose: true })),
    }], { generatedTokens: 3, wallMs: 1500, peakMemoryBytes: 9, peakMemoryScope: 'process', h2dBytes: 9 });
    runs.finish('run-modes', 'completed');
    const opts = { runs, responses, inputDataText: inputText, tools };
    await expect(writeResultZip({ ...opts, inputDataText: `${inputText}\n` }, 'run-modes', path.join(dir, 'modes-bad.zip'))).rejects.toThrow(
      /^run run-modes used input_data\.jsonl with sha256 [0-9a-f]{64}, but the one given has [0-9a-f]{64}$/,
    );
    const out = path.join(dir, 'modes.zip');
    await writeResultZip(opts, 'run-modes', out);
    const entries = await readZipEntries(out);
    const row = (name: string) => JSON.parse(entries.get(name)!.toString().split('\n')[0]!) as { follow_all_instructions: boolean; follow_instruction_list: boolean[] };
    expect(row('eval_results_strict.jsonl')).toMatchObject({ follow_all_instructions: false });
    expect(row('eval_results_strict.jsonl').follow_instruction_list.every((v) => !v)).toBe(true);
    expect(row('eval_results_loose.jsonl')).toMatchObject({ follow_all_instructions: true });
    expect(row('eval_results_loose.jsonl').follow_instruction_list.every((v) => v)).toBe(true);
    expect(JSON.parse(entries.get('performance.json')!.toString())).toMatchObject({ wall_seconds: 1.5, peak_memory_bytes: null, peak_memory_scope: null, h2d_bytes: null });
    expect(JSON.parse(entries.get('manifest.json')!.toString())).toMatchObject({ model: { manifest: 'not json' } });
    db.close();
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

  it('records in findings.jsonl what decided each verdict, with the loose variant that passed', async () => {
    const row = {
      key: 7,
      prompt: 'Greet the world and end with the usual question.',
      instruction_id_list: ['punctuation:no_comma', 'startend:end_checker'],
      kwargs: [{}, { end_phrase: 'Is there anything else I can help with?' }],
    };
    const input = `${JSON.stringify(row)}\n`;
    const db = new Database(':memory:');
    migrate(db);
    const repos = storeRun(db, 'run-why', input, 1, ['Hello, world.\nIs there anything else I can help with?\nBye'], tools, 'completed');
    const out = path.join(dir, 'why.zip');
    await writeResultZip({ ...repos, inputDataText: input, tools }, 'run-why', out);
    db.close();
    const entries = await readZipEntries(out);
    expect(entries.get('findings.jsonl')!.toString()).toBe(
      `${JSON.stringify({
        key: 7,
        instructions: [
          {
            id: 'punctuation:no_comma',
            strict: { follows: false, finding: '1 comma; needs none' },
            loose: { follows: true, finding: '0 commas; needs none', variant: 'without its first line' },
          },
          {
            id: 'startend:end_checker',
            strict: { follows: false, finding: 'ends with "…here anything else i can help with?\\nbye"; needs "is there anything else i can help with?"' },
            loose: { follows: true, finding: 'ends with "is there anything else i can help with?"', variant: 'without its last line' },
          },
        ],
      })}\n`,
    );
    expect((await verifyResultZip(out, tools)).problems).toEqual([]);
  });

  const editFindings = (e: Map<string, Buffer>, edit: (lines: { key: number; instructions: Record<string, Record<string, unknown>>[] }[]) => unknown[]) => {
    const lines = e.get('findings.jsonl')!.toString().trimEnd().split('\n').map((l) => JSON.parse(l) as { key: number; instructions: Record<string, Record<string, unknown>>[] });
    e.set('findings.jsonl', Buffer.from(edit(lines).map((l) => `${JSON.stringify(l)}\n`).join('')));
    setManifestHash(e, 'findings.jsonl');
  };
  it.each<[string, (e: Map<string, Buffer>) => string]>([
    ['a reworded finding', (e) => {
      let expected = '';
      editFindings(e, (lines) => {
        const strict = lines[1]!.instructions[0]!.strict!;
        expected = `findings.jsonl line 2 (key ${lines[1]!.key}): instructions[0].strict.finding is "close enough", re-scoring gives ${JSON.stringify(strict.finding)}`;
        strict.finding = 'close enough';
        return lines;
      });
      return expected;
    }],
    ['a flipped verdict', (e) => {
      let expected = '';
      editFindings(e, (lines) => {
        const loose = lines[0]!.instructions[0]!.loose!;
        expected = `findings.jsonl line 1 (key ${lines[0]!.key}): instructions[0].loose.follows is ${!loose.follows}, re-scoring gives ${String(loose.follows)}`;
        loose.follows = !loose.follows;
        return lines;
      });
      return expected;
    }],
    ['a dropped line', (e) => {
      editFindings(e, (lines) => lines.slice(0, -1));
      return 'findings.jsonl: 3 rows, re-scoring the responses gives 4';
    }],
    ['an instruction left out', (e) => {
      let expected = '';
      editFindings(e, (lines) => {
        const n = lines[2]!.instructions.length;
        expected = `findings.jsonl line 3 (key ${lines[2]!.key}): instructions.length is ${n - 1}, re-scoring gives ${n}`;
        lines[2]!.instructions.pop();
        return lines;
      });
      return expected;
    }],
    ['a line that is not JSON', (e) => {
      editFindings(e, (lines) => lines);
      const text = e.get('findings.jsonl')!.toString().replace(/^.*\n/, '{oops\n');
      e.set('findings.jsonl', Buffer.from(text));
      setManifestHash(e, 'findings.jsonl');
      const key = (JSON.parse(e.get('responses.jsonl')!.toString().split('\n')[0]!) as { key: number }).key;
      let message = '';
      try {
        JSON.parse('{oops');
      } catch (err) {
        message = (err as Error).message;
      }
      return `findings.jsonl line 1 (key ${key}): invalid JSON (${message})`;
    }],
  ])('fails findings.jsonl with %s even with its hash updated, naming the line and field', async (what, tamper) => {
    const entries = await readZipEntries(good);
    const expected = tamper(entries);
    const bad = path.join(dir, `findings-${what.replace(/\W+/g, '-')}.zip`);
    await rezip(entries, bad);
    expect((await verifyResultZip(bad, tools)).problems).toEqual([expected]);
  });

  it('still verifies a v1 ZIP, which has no findings.jsonl, and holds each format to its own files', async () => {
    const entries = await readZipEntries(good);
    const findings = entries.get('findings.jsonl')!;
    entries.delete('findings.jsonl');
    const m = manifestOf(entries);
    const v1 = { ...m, format: 'horizon-result-v1', files: m.files.filter((f) => f.name !== 'findings.jsonl') };
    setManifest(entries, v1 as Manifest);
    await rezip(entries, path.join(dir, 'v1.zip'));
    expect((await verifyResultZip(path.join(dir, 'v1.zip'), tools)).problems).toEqual([]);

    setManifest(entries, { ...v1, format: 'horizon-result-v2' } as Manifest);
    await rezip(entries, path.join(dir, 'v2-without.zip'));
    expect((await verifyResultZip(path.join(dir, 'v2-without.zip'), tools)).problems).toEqual(['manifest.json: files has no entry for findings.jsonl']);

    entries.set('findings.jsonl', findings);
    setManifest(entries, { ...m, format: 'horizon-result-v1' } as Manifest);
    await rezip(entries, path.join(dir, 'v1-with.zip'));
    expect((await verifyResultZip(path.join(dir, 'v1-with.zip'), tools)).problems).toEqual([
      'manifest.json: files lists "findings.jsonl", which is not a file of a result ZIP',
    ]);
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
    expect(r.problems).toEqual([
      `input_data.jsonl: sha256 is ${sha256(entries.get('input_data.jsonl')!)}, manifest.json run.included.sha256 says ${before}`,
      // Row 5 is unanswered, so summary.json lists its (original) prompt as missing.
      'summary.json: missing lists the right keys, but with prompts that differ from input_data.jsonl',
    ]);
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
      `summary.json: missing lists keys [${(JSON.parse(lines[4]!) as { key: number }).key}], re-scoring gives []`,
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

    // An unanswered row edited and every hash in the manifest updated: the official pin catches it (and summary.json,
    // which still lists the row's original prompt as missing).
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
      'summary.json: missing lists the right keys, but with prompts that differ from input_data.jsonl',
    ]);
  });

  it('reports an unreadable file clearly', async () => {
    const junk = path.join(dir, 'junk.zip');
    await writeFile(junk, 'not a zip');
    await expect(verifyResultZip(junk, tools)).rejects.toThrow(/junk\.zip: not a readable ZIP/);
  });

  it('lists the unanswered rows of a partial run as missing in summary.json', async () => {
    const entries = await readZipEntries(good);
    const fifth = parsePromptRecords(inputText, 'input')[4]!;
    const summary = JSON.parse(entries.get('summary.json')!.toString()) as { missing: unknown; promptsScored: number };
    expect(summary.promptsScored).toBe(4);
    expect(summary.missing).toEqual([{ key: fifth.key, prompt: fifth.prompt }]);
  });

  it('fails a cancelled run whose manifest claims it completed, naming the unanswered keys', async () => {
    const fifth = parsePromptRecords(inputText, 'input')[4]!;
    const entries = await readZipEntries(good);
    const m = manifestOf(entries);
    m.run.status = 'completed';
    setManifest(entries, m);
    await rezip(entries, path.join(dir, 'claims-completed.zip'));
    expect((await verifyResultZip(path.join(dir, 'claims-completed.zip'), tools)).problems).toEqual([
      `responses.jsonl: no response for 1 of the 5 rows of input_data.jsonl (keys ${fifth.key}), but manifest.json run.status is completed`,
    ]);

    m.run.responses = 5;
    setManifest(entries, m);
    await rezip(entries, path.join(dir, 'claims-all.zip'));
    const r = await verifyResultZip(path.join(dir, 'claims-all.zip'), tools);
    expect(r.problems).toEqual([
      'responses.jsonl: 4 rows, manifest.json run.responses says 5',
      `responses.jsonl: no response for 1 of the 5 rows of input_data.jsonl (keys ${fifth.key}), but manifest.json run.status is completed`,
    ]);
    // The report counts what the ZIP holds, not what the manifest claims.
    expect(r.run).toEqual({ status: 'completed', responses: 4, total: 5 });
  });

  it('fails a completed run with its failing responses removed, but verifies the same rows as a cancelled run', async () => {
    const answers = ['A plain answer without commas.', 'Yes, a comma.', 'THE END', 'hello\nworld', 'fine'];
    const entries = await readZipEntries(await writeRun('run-all', inputText, 5, answers, tools, path.join(dir, 'all.zip'), 'completed'));
    const strict = entries.get('eval_results_strict.jsonl')!.toString().trimEnd().split('\n');
    const lines = entries.get('responses.jsonl')!.toString().trimEnd().split('\n');
    const kept = lines.filter((_l, i) => strict[i]!.startsWith('{"follow_all_instructions": true'));
    expect(kept.length).toBeLessThan(5);
    const dropped = lines.filter((l) => !kept.includes(l)).map((l) => (JSON.parse(l) as { key: number }).key);
    entries.set('responses.jsonl', Buffer.from(kept.map((l) => `${l}\n`).join('')));
    regenerate(entries, tools);
    await rezip(entries, path.join(dir, 'cherry.zip'));
    const r = await verifyResultZip(path.join(dir, 'cherry.zip'), tools);
    expect(r.problems).toEqual([
      `responses.jsonl: no response for ${dropped.length} of the 5 rows of input_data.jsonl (keys ${dropped.join(', ')}), but manifest.json run.status is completed`,
    ]);

    const m = manifestOf(entries);
    m.run.status = 'cancelled';
    setManifest(entries, m);
    await rezip(entries, path.join(dir, 'honest-partial.zip'));
    const partial = await verifyResultZip(path.join(dir, 'honest-partial.zip'), tools);
    expect(partial.problems).toEqual([]);
    expect(partial.run).toEqual({ status: 'cancelled', responses: kept.length, total: 5 });
  });

  it('ties the rows of a run over part of the official set to the official file, or says it could not', async () => {
    const official = readFileSync(path.join(shared, 'ifeval', 'input_data.jsonl'), 'utf8');
    const zip = await writeRun('run-limit', official, 20, ['One answer.', 'Another answer.'], tools, path.join(dir, 'limit.zip'));
    expect(await verifyResultZip(zip, tools, { officialInputText: official })).toMatchObject({ verified: true, problems: [], unchecked: [] });

    // Row 10 rewritten (unanswered, so only input_data.jsonl, summary.json and the hashes change), all regenerated.
    const entries = await readZipEntries(zip);
    const lines = entries.get('input_data.jsonl')!.toString().split('\n');
    const row = JSON.parse(lines[9]!) as { prompt: string; instruction_id_list: string[]; kwargs: unknown[] };
    lines[9] = JSON.stringify({ ...row, prompt: 'Say hi.', instruction_id_list: ['punctuation:no_comma'], kwargs: [{}] });
    entries.set('input_data.jsonl', Buffer.from(lines.join('\n')));
    regenerate(entries, tools);
    const bad = path.join(dir, 'limit-edited.zip');
    await rezip(entries, bad);
    expect((await verifyResultZip(bad, tools, { officialInputText: official })).problems).toEqual([
      'input_data.jsonl line 10: differs from row 10 of the official IFEval input_data.jsonl (manifest.json run.datasetSha256 says the run used the official set)',
    ]);
    expect(await verifyResultZip(bad, tools)).toMatchObject({
      problems: [],
      unchecked: [
        'input_data.jsonl: its 20 rows were not compared with the first 20 of the official IFEval set (manifest.json run.datasetSha256): ' +
          'the official input_data.jsonl was not available to the verifier',
      ],
    });
    await expect(verifyResultZip(bad, tools, { officialInputText: inputText })).rejects.toThrow(/given to the verifier has sha256 [0-9a-f]{64}, not /);
  });

  type Summary = Record<string, unknown> & {
    perInstruction: Record<string, unknown>[];
    perCategory: Record<string, unknown>[];
    keys: number[];
    missing: unknown[];
  };
  it.each<[string, (s: Summary) => string]>([
    ['perCategory accuracy', (s) => {
      const row = s.perCategory[0]!;
      const real = row.strictAccuracy;
      row.strictAccuracy = 0.125;
      return `summary.json: perCategory ${String(row.category)} strictAccuracy is 0.125, re-scoring gives ${String(real)}`;
    }],
    ['perInstruction accuracy', (s) => {
      const row = s.perInstruction[0]!;
      const real = row.looseAccuracy;
      row.looseAccuracy = 0.125;
      return `summary.json: perInstruction ${String(row.id)} looseAccuracy is 0.125, re-scoring gives ${String(real)}`;
    }],
    ['keys', (s) => {
      const real = JSON.stringify(s.keys);
      s.keys = [9999];
      return `summary.json: keys is [9999], re-scoring gives ${real}`;
    }],
    ['missing', (s) => {
      const real = JSON.stringify(s.missing.map((m) => (m as { key: number }).key));
      s.missing = [];
      return `summary.json: missing lists keys [], re-scoring gives ${real}`;
    }],
    ['an extra field', (s) => {
      s.verifiedBy = 'me';
      return 'summary.json: unexpected field verifiedBy';
    }],
  ])('fails a summary.json with a tampered %s, naming it', async (what, tamper) => {
    const entries = await readZipEntries(good);
    const summary = JSON.parse(entries.get('summary.json')!.toString()) as Summary;
    const expected = tamper(summary);
    entries.set('summary.json', Buffer.from(JSON.stringify(summary)));
    setManifestHash(entries, 'summary.json');
    const bad = path.join(dir, `summary-${what.replaceAll(' ', '-')}.zip`);
    await rezip(entries, bad);
    expect((await verifyResultZip(bad, tools)).problems).toEqual([expected]);
  });

  it('fails a manifest listing a file a result ZIP does not have, or one file twice', async () => {
    const entries = await readZipEntries(good);
    const m = manifestOf(entries);
    entries.set('notes.txt', Buffer.from('trust me\n'));
    setManifest(entries, { ...m, files: [...m.files, { name: 'notes.txt', bytes: 9, sha256: sha256('trust me\n') }] });
    await rezip(entries, path.join(dir, 'extra.zip'));
    expect((await verifyResultZip(path.join(dir, 'extra.zip'), tools)).problems).toEqual([
      'manifest.json: files lists "notes.txt", which is not a file of a result ZIP',
    ]);

    entries.delete('notes.txt');
    const responses = m.files.find((f) => f.name === 'responses.jsonl')!;
    setManifest(entries, { ...m, files: [{ ...responses, sha256: '0'.repeat(64) }, ...m.files] });
    await rezip(entries, path.join(dir, 'twice.zip'));
    expect((await verifyResultZip(path.join(dir, 'twice.zip'), tools)).problems).toEqual([
      `responses.jsonl: sha256 is ${responses.sha256}, manifest.json says ${'0'.repeat(64)}`,
      'manifest.json: files lists responses.jsonl twice',
    ]);
  });

  it.each<[string, (e: Map<string, Buffer>) => void, string]>([
    ['manifest.json null', (e) => e.set('manifest.json', Buffer.from('null')), 'manifest.json: not a JSON object'],
    ['manifest files [null]', (e) => setManifest(e, { ...manifestOf(e), files: [null as never] }), 'manifest.json: files[0] needs a string name, an integer bytes and a sha256'],
    ['a files entry without a name', (e) => {
      const m = manifestOf(e);
      delete (m.files[0] as Partial<Manifest['files'][0]>).name;
      setManifest(e, m);
    }, 'manifest.json: files[0] needs a string name, an integer bytes and a sha256'],
    ['manifest run null', (e) => setManifest(e, { ...manifestOf(e), run: null as never }), 'manifest.json: run is not an object'],
    ['a responses.jsonl line null', (e) => {
      e.set('responses.jsonl', Buffer.from(`null\n${e.get('responses.jsonl')!.toString()}`));
      setManifestHash(e, 'responses.jsonl');
    }, 'responses.jsonl line 1: needs integer key, string prompt and string response'],
    ['an eval_results line null', (e) => {
      e.set('eval_results_strict.jsonl', Buffer.from(e.get('eval_results_strict.jsonl')!.toString().replace(/^.*\n/, 'null\n')));
      setManifestHash(e, 'eval_results_strict.jsonl');
    }, `eval_results_strict.jsonl line 1 (key KEY0): not a JSON object`],
    ['summary.json perInstruction [null]', (e) => {
      e.set('summary.json', Buffer.from(JSON.stringify({ ...(JSON.parse(e.get('summary.json')!.toString()) as object), perInstruction: [null] })));
      setManifestHash(e, 'summary.json');
    }, 'summary.json: perInstruction[0] is not an object with a string id'],
  ])('reports %s as a problem of that file, without throwing', async (what, tamper, expected) => {
    const entries = await readZipEntries(good);
    tamper(entries);
    const bad = path.join(dir, `malformed-${what.replace(/\W+/g, '-')}.zip`);
    await rezip(entries, bad);
    const r = await verifyResultZip(bad, tools);
    expect(r.verified).toBe(false);
    const key0 = String(parsePromptRecords(inputText, 'input')[0]!.key);
    expect(r.problems).toContain(expected.replace('KEY0', key0));
    expect(r.problems.filter((p) => /invalid JSON|^undefined/.test(p))).toEqual([]);
  });

  const editJson = (e: Map<string, Buffer>, name: string, edit: (v: Record<string, unknown>) => void): void => {
    const v = JSON.parse(e.get(name)!.toString()) as Record<string, unknown>;
    edit(v);
    e.set(name, Buffer.from(JSON.stringify(v)));
    setManifestHash(e, name);
  };
  const editLines = (e: Map<string, Buffer>, name: string, edit: (lines: string[]) => string[]): void => {
    e.set(name, Buffer.from(`${edit(e.get(name)!.toString().trimEnd().split('\n')).join('\n')}\n`));
    setManifestHash(e, name);
  };
  it.each<[string, (e: Map<string, Buffer>) => void, RegExp]>([
    ['another format', (e) => setManifest(e, { ...manifestOf(e), format: 'horizon-result-v0' } as Manifest),
      /^manifest\.json: format is "horizon-result-v0", expected horizon-result-v2 or horizon-result-v3 \(or horizon-result-v1, from earlier builds\)$/],
    ['a wrong size', (e) => {
      const m = manifestOf(e);
      m.files.find((f) => f.name === 'performance.json')!.bytes += 1;
      setManifest(e, m);
    }, /^performance\.json: \d+ bytes, manifest\.json says \d+$/],
    ['a sha256 with a character too many', (e) => {
      const m = manifestOf(e);
      m.files[0]!.sha256 += 'a';
      setManifest(e, m);
    }, /^manifest\.json: files\[0\] needs a string name, an integer bytes and a sha256$/],
    ['a file left out of the list', (e) => setManifest(e, { ...manifestOf(e), files: manifestOf(e).files.filter((f) => f.name !== 'summary.json') }),
      /^manifest\.json: files has no entry for summary\.json$/],
    ['an unlisted file in the ZIP', (e) => setManifest(e, { ...manifestOf(e), files: manifestOf(e).files.filter((f) => f.name !== 'summary.json') }),
      /^summary\.json: in the ZIP but not listed in manifest\.json$/],
    ['a status that is not a string', (e) => setManifest(e, { ...manifestOf(e), run: { ...manifestOf(e).run, status: 5 } }),
      /^manifest\.json: run\.status is 5, not a string$/],
    ['a negative response count', (e) => setManifest(e, { ...manifestOf(e), run: { ...manifestOf(e).run, responses: -1 } }),
      /^manifest\.json: run\.responses is -1, not a count$/],
    ['an included file of another name', (e) => {
      const m = manifestOf(e);
      setManifest(e, { ...m, run: { ...m.run, included: { ...(m.run.included as object), file: 'other.jsonl' } } });
    }, /^manifest\.json: run\.included\.file is "other\.jsonl", expected "input_data\.jsonl"$/],
    ['a dataset row count that is not a count', (e) => setManifest(e, { ...manifestOf(e), run: { ...manifestOf(e).run, datasetRows: 'many' } }),
      /^manifest\.json: run\.datasetRows is not a row count$/],
    ['a response given twice', (e) => editLines(e, 'responses.jsonl', (l) => [...l, l[0]!]), /^responses\.jsonl line 5: key \d+ answered twice$/],
    ['a response to another prompt', (e) => editLines(e, 'responses.jsonl', (l) => [JSON.stringify({ ...(JSON.parse(l[0]!) as object), prompt: 'other' }), ...l.slice(1)]),
      /^responses\.jsonl line 1: key \d+ prompt differs from input_data\.jsonl$/],
    ['an eval results row dropped', (e) => editLines(e, 'eval_results_strict.jsonl', (l) => l.slice(0, -1)),
      /^eval_results_strict\.jsonl: 3 rows, re-scoring the responses gives 4$/],
    ['a summary row with an extra field', (e) => editJson(e, 'summary.json', (v) => {
      (v.perInstruction as Record<string, unknown>[])[0]!.extra = 1;
    }), /^summary\.json: perInstruction \S+ has an unexpected field extra$/],
    ['a summary row listed twice', (e) => editJson(e, 'summary.json', (v) => {
      const rows = v.perInstruction as unknown[];
      rows.push(rows[0]);
    }), /^summary\.json: perInstruction lists \S+ twice$/],
    ['a summary row no prompt has', (e) => editJson(e, 'summary.json', (v) => {
      const rows = v.perInstruction as Record<string, unknown>[];
      rows.push({ ...rows[0], id: 'bogus:id' });
    }), /^summary\.json: perInstruction lists bogus:id, which no scored prompt has$/],
  ])('fails a ZIP with %s, naming it', async (what, tamper, expected) => {
    const entries = await readZipEntries(good);
    tamper(entries);
    const bad = path.join(dir, `tampered-${what.replace(/\W+/g, '-')}.zip`);
    await rezip(entries, bad);
    const r = await verifyResultZip(bad, tools);
    expect(r.verified).toBe(false);
    expect(r.problems).toContainEqual(expect.stringMatching(expected));
  });

  it('refuses an entry larger than a result can hold before inflating it, and names the entry of a corrupt one', async () => {
    const zip = readFileSync(good);
    const short = path.join(dir, 'short-entry.zip');
    await writeFile(short, declareSize(zip, 'summary.json', 10));
    await expect(verifyResultZip(short, tools)).rejects.toThrow(
      `${short}: reading the ZIP failed (summary.json: its data holds more bytes than the ZIP's directory records (10): the ZIP was altered or damaged here)`,
    );
    // A byte flipped in the compressed data of the first entry: that entry is named, in words.
    const flipped = Buffer.from(zip);
    flipped[60] = flipped[60]! ^ 0x55;
    const damaged = path.join(dir, 'damaged-entry.zip');
    await writeFile(damaged, flipped);
    const first = (await readZipEntries(good)).keys().next().value as string;
    await expect(verifyResultZip(damaged, tools)).rejects.toThrow(new RegExp(`reading the ZIP failed \\(${first.replace('.', '\\.')}: (its compressed data is damaged|its data holds)`));
    const huge = path.join(dir, 'huge-entry.zip');
    const cap = MAX_ENTRY_BYTES['responses.jsonl']!;
    // Decoding an entry into one string fails past V8's limit of 2^29 - 24 characters.
    expect(cap).toBeLessThan(2 ** 29 - 24);
    await writeFile(huge, declareSize(zip, 'responses.jsonl', cap + 1));
    await expect(verifyResultZip(huge, tools)).rejects.toThrow(
      `${huge}: reading the ZIP failed (responses.jsonl: more than ${cap} bytes uncompressed, more than a result ZIP's responses.jsonl holds)`,
    );
  });

  it('refuses a ZIP holding one name twice, and an entry of another name over 1 MiB, closing the file either way', async () => {
    const entries = await readZipEntries(good);
    const zip = new ZipFile();
    for (const [name, b] of entries) zip.addBuffer(b, name);
    zip.addBuffer(Buffer.from('{}\n'), 'responses.jsonl');
    zip.end();
    const chunks: Buffer[] = [];
    for await (const c of zip.outputStream) chunks.push(c as Buffer);
    const twice = path.join(dir, 'twice-entry.zip');
    await writeFile(twice, Buffer.concat(chunks));
    await expect(verifyResultZip(twice, tools)).rejects.toThrow(`${twice}: reading the ZIP failed (responses.jsonl: in the ZIP twice)`);

    entries.set('notes.txt', Buffer.from('x'));
    const plain = path.join(dir, 'other-entry.zip');
    await rezip(entries, plain);
    const other = path.join(dir, 'other-entry-large.zip');
    await writeFile(other, declareSize(readFileSync(plain), 'notes.txt', 2 ** 20 + 1));
    await expect(verifyResultZip(other, tools)).rejects.toThrow(
      `${other}: reading the ZIP failed (notes.txt: more than ${2 ** 20} bytes uncompressed, and not a file of a result ZIP)`,
    );
    if (process.platform === 'linux') {
      const open = () => readdirSync('/proc/self/fd').flatMap((fd) => {
        try {
          return [readlinkSync(`/proc/self/fd/${fd}`)];
        } catch {
          return [];
        }
      });
      await vi.waitFor(() => expect(open().filter((f) => f === twice || f === other)).toEqual([]));
    }
  });

  it('skips directory entries and reads on past them', async () => {
    const entries = await readZipEntries(good);
    const zip = new ZipFile();
    zip.addEmptyDirectory('extra/');
    for (const [name, b] of entries) zip.addBuffer(b, name);
    zip.end();
    const chunks: Buffer[] = [];
    for await (const c of zip.outputStream) chunks.push(c as Buffer);
    const withDir = path.join(dir, 'with-dir.zip');
    await writeFile(withDir, Buffer.concat(chunks));
    expect([...(await readZipEntries(withDir)).keys()]).toEqual([...entries.keys()]);
    expect(await verifyResultZip(withDir, tools)).toMatchObject({ verified: true, problems: [] });
  });

  it('reports a ZIP without responses.jsonl as a problem, without throwing', async () => {
    const entries = await readZipEntries(good);
    entries.delete('responses.jsonl');
    const bad = path.join(dir, 'no-responses.zip');
    await rezip(entries, bad);
    expect((await verifyResultZip(bad, tools)).problems).toEqual(['responses.jsonl: listed in manifest.json but missing from the ZIP']);
  });

  it('uses only the dataset rows for a run of more prompts than the dataset has', async () => {
    const zip = await writeRun('run-over', inputText, 10, ['One answer.'], tools, path.join(dir, 'over.zip'));
    expect(manifestOf(await readZipEntries(zip)).run).toMatchObject({ total: 10, datasetRows: 6, included: { rows: 6 } });
    expect(await verifyResultZip(zip, tools)).toMatchObject({ verified: true, problems: [], unchecked: [] });
  });

  it('fails an official-set manifest claiming another row count', async () => {
    const official = readFileSync(path.join(shared, 'ifeval', 'input_data.jsonl'), 'utf8');
    const zip = await writeRun('run-rows', official, 20, ['One answer.'], tools, path.join(dir, 'rows.zip'));
    const entries = await readZipEntries(zip);
    setManifest(entries, { ...manifestOf(entries), run: { ...manifestOf(entries).run, datasetRows: 20 } });
    const bad = path.join(dir, 'rows-claimed.zip');
    await rezip(entries, bad);
    expect((await verifyResultZip(bad, tools, { officialInputText: official })).problems).toEqual([
      'manifest.json: run.datasetRows is 20, but run.datasetSha256 is the official IFEval set of 541 rows',
    ]);
  });

  it.each<[string, (row: Record<string, unknown>) => Record<string, unknown>, string]>([
    ['its prompt', (r) => ({ ...r, prompt: 'other' }), 'prompt differs from input_data.jsonl'],
    ['follow_all_instructions', (r) => ({ ...r, follow_all_instructions: !r.follow_all_instructions }), 'follow_all_instructions is '],
    ['instruction_id_list', (r) => ({ ...r, instruction_id_list: ['bogus:id'] }), 'instruction_id_list differs from input_data.jsonl'],
    ['only its formatting', (r) => r, 'not in the reference format (formatting differs)'],
  ])('fails an eval results row with %s changed, naming that field alone', async (what, edit, expected) => {
    const entries = await readZipEntries(good);
    const key0 = String(parsePromptRecords(inputText, 'input')[0]!.key);
    editLines(entries, 'eval_results_strict.jsonl', (l) => [JSON.stringify(edit(JSON.parse(l[0]!) as Record<string, unknown>)), ...l.slice(1)]);
    const bad = path.join(dir, `eval-row-${what.replace(/\W+/g, '-')}.zip`);
    await rezip(entries, bad);
    const r = await verifyResultZip(bad, tools);
    expect(r.problems).toHaveLength(1);
    expect(r.problems[0]).toMatch(new RegExp(`^eval_results_strict\\.jsonl line 1 \\(key ${key0}\\): `));
    expect(r.problems[0]).toContain(expected);
  });

  it('says no prompts were scored for a run with no response, rather than 0%', async () => {
    const zip = await writeRun('run-zero', inputText, 3, [], tools, path.join(dir, 'zero.zip'));
    expect(await verifyResultZip(zip, tools)).toMatchObject({
      verified: true,
      accuracies: null,
      run: { status: 'cancelled', responses: 0, total: 3 },
    });
  });

  it('exports NUL characters and surrogate pairs as stored, a lone surrogate as U+FFFD, and verifies', async () => {
    const answers = ['nul\u0000inside', 'lone \uD800 high', '😀 pair'];
    const zip = await writeRun('run-text', inputText, 3, answers, tools, path.join(dir, 'text.zip'), 'completed');
    const entries = await readZipEntries(zip);
    const lines = entries.get('responses.jsonl')!.toString('utf8').trimEnd().split('\n');
    expect(lines.map((l) => (JSON.parse(l) as { response: string }).response)).toEqual(['nul\u0000inside', 'lone \uFFFD high', '😀 pair']);
    expect(await verifyResultZip(zip, tools)).toMatchObject({ verified: true, problems: [] });
  });

  it('refuses a running run, and counts only what it read while another connection adds responses', async () => {
    const file = path.join(dir, 'live', 'runmap.sqlite');
    const db = openDatabase(file);
    const other = openDatabase(file);
    try {
      const records = parsePromptRecords(inputText, 'input');
      const stored = (i: number) => {
        const v = scorePrompt(records[i]!, `answer ${i}`, tools);
        return {
          key: records[i]!.key, position: i, prompt: records[i]!.prompt, response: `answer ${i}`, tokens: 7, finishReason: 'stop' as const,
          ttftMs: 12, decodeTokensPerSecond: 50,
          verdicts: records[i]!.instruction_id_list.map((id, j) => ({ instructionId: id, kwargs: records[i]!.kwargs[j] ?? {}, strict: v.strict[j]!, loose: v.loose[j]! })),
        };
      };
      const figures = { generatedTokens: 7, wallMs: 100, peakMemoryBytes: 0, peakMemoryScope: null, h2dBytes: 0 };
      const runs = new RunRepo(db);
      runs.create({ ...sampleRun('run-live'), total: 5, datasetSha256: sha256(inputText) });
      runs.markRunning('run-live');
      const plain = { runs, responses: new ResponseRepo(db), db, inputDataText: inputText, tools };
      await expect(writeResultZip(plain, 'run-live', path.join(dir, 'live.zip'))).rejects.toThrow(
        'run run-live is still running: export it once it has finished or been cancelled',
      );

      const otherResponses = new ResponseRepo(other);
      otherResponses.insertBatch('run-live', [stored(0), stored(1)], figures);
      runs.finish('run-live', 'cancelled');
      class Interleaved extends ResponseRepo {
        override all(runId: string) {
          const rows = super.all(runId);
          otherResponses.insertBatch(runId, [stored(rows.length)], figures);
          return rows;
        }
      }
      const out = path.join(dir, 'live.zip');
      const written = await writeResultZip({ ...plain, responses: new Interleaved(db) }, 'run-live', out);
      expect(written.run).toEqual({ status: 'cancelled', responses: 2, total: 5 });
      const entries = await readZipEntries(out);
      expect(manifestOf(entries).run.responses).toBe(2);
      expect(entries.get('responses.jsonl')!.toString().trimEnd().split('\n')).toHaveLength(2);
      expect(JSON.parse(entries.get('performance.json')!.toString())).toMatchObject({ generated_tokens: 7, batches: 1 });
      expect((await verifyResultZip(out, tools)).problems).toEqual([]);
    } finally {
      other.close();
      db.close();
    }
  });
});
