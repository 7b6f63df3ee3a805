import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';

import { run } from '../../../../../electron/cli/commands/verify.js';
import { PERF_FORMAT } from '../../../../../electron/common/perf-campaign.js';
import { migrate } from '../../../../../electron/main/db/open-database.js';
import { readZipEntries } from '../../../../../electron/main/export/verify-result-zip.js';
import { writeResultZip } from '../../../../../electron/main/export/write-result-zip.js';
import { loadTextTools } from '../../../../../evals/ifeval/node/load-text-tools.js';
import type { TextTools } from '../../../../../evals/ifeval/text/text-tools.js';
import { manifestOf, regenerate, rezip, setManifest, storeRun } from '../../main/export/zip-fixtures.js';

const SHARED = path.resolve(import.meta.dirname, '..', '..', '..', '..', '..', '..', 'shared');

async function capture(args: string[]): Promise<{ code: number; out: string }> {
  const out: string[] = [];
  const log = vi.spyOn(console, 'log').mockImplementation((...a: unknown[]) => void out.push(a.join(' ')));
  try {
    return { code: await run(args), out: out.join('\n') };
  } finally {
    log.mockRestore();
  }
}

describe('horizon verify', () => {
  let dir: string;
  let tools: TextTools;
  const official = readFileSync(path.join(SHARED, 'ifeval', 'input_data.jsonl'), 'utf8');

  /** A ZIP of a run over the first `total` official prompts with the first answers given. */
  async function zipOf(name: string, total: number, answers: readonly string[], status: 'cancelled', cutKeys: readonly number[] = []): Promise<string> {
    const db = new Database(':memory:');
    migrate(db);
    const repos = storeRun(db, `run-${name}`, official, total, answers, tools, status);
    for (const key of cutKeys) db.prepare("UPDATE responses SET finish_reason = 'length' WHERE key = ?").run(key);
    const out = path.join(dir, `${name}.zip`);
    await writeResultZip({ ...repos, inputDataText: official, tools }, `run-${name}`, out);
    db.close();
    return out;
  }

  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'horizon-cli-verify-'));
    tools = await loadTextTools({ punktDir: path.join(SHARED, 'nltk', 'punkt_english') });
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it('says no prompts were scored for a run with no response, and that the run is partial', async () => {
    const r = await capture([await zipOf('zero', 3, [], 'cancelled')]);
    expect(r.code).toBe(0);
    expect(r.out).toContain('note: a cancelled run: 0 of its 3 prompts');
    expect(r.out).toContain('no prompts scored');
    expect(r.out).not.toContain('%');
    // Under the verdict, the run the manifest names (storeRun's sample model, on the CPU).
    expect(r.out.split('\n')[1]).toMatch(/^ {2}the ZIP says: run run-zero: horizon\/tiny @ aaaaaaa, INT4, CPU backend, started \d{4}-\d\d-\d\dT[\d:.]+Z$/);
    // No response, so nothing to say of how they ended.
    expect(r.out).not.toContain('cut at max new tokens');
  });

  it('says how many responses the ZIP says were cut at max new tokens', async () => {
    const r = await capture([await zipOf('cut', 3, ['One.', 'Two.'], 'cancelled', [1001])]);
    expect(r.code).toBe(0);
    expect(r.out.split('\n')[2]).toBe('  1 of 2 responses cut at max new tokens (16)');
    expect(JSON.parse((await capture([await zipOf('cut', 3, ['One.', 'Two.'], 'cancelled', [1001]), '--json'])).out)).toMatchObject({ cut: { cut: 1, of: 2, maxNewTokens: 16 } });
  });

  it('prints the report as JSON with --json, with the same exit status', async () => {
    const zip = await zipOf('json', 3, ['One.', 'Two.'], 'cancelled');
    const good = await capture([zip, '--json']);
    expect(good.code).toBe(0);
    const j = JSON.parse(good.out) as Record<string, unknown>;
    expect(j).toMatchObject({ file: zip, kind: 'result', verified: true, problems: [], unchecked: [], run: { status: 'cancelled', responses: 2, total: 3 } });
    expect(j.subject).toMatchObject({ id: 'run-json', label: null, modelRepo: 'horizon/tiny', modelId: 'tiny@abc/int4', weights: 'int4', backendLabel: 'CPU backend' });
    // storeRun's responses all ended by the model, under a cap of 16.
    expect(j.cut).toEqual({ cut: 0, of: 2, maxNewTokens: 16 });
    // 1000 (no commas, 3 highlights, 300+ words) follows only its first; 1001 (no commas) passes: 2 of 4 instructions.
    expect(j.accuracies).toEqual({ promptStrict: 0.5, promptLoose: 0.5, instructionStrict: 0.5, instructionLoose: 0.5 });

    const entries = await readZipEntries(zip);
    const m = manifestOf(entries);
    setManifest(entries, { ...m, run: { ...m.run, responses: 3 } });
    const bad = path.join(dir, 'json-bad.zip');
    await rezip(entries, bad);
    const r = await capture([bad, '--json']);
    expect(r.code).toBe(1);
    expect(JSON.parse(r.out)).toMatchObject({ kind: 'result', verified: false, problems: ['responses.jsonl: 2 rows, manifest.json run.responses says 3'] });

    setManifest(entries, { ...m, format: PERF_FORMAT } as never);
    const campaign = path.join(dir, 'json-campaign.zip');
    await rezip(entries, campaign);
    const c = await capture([campaign, '--json']);
    expect(c.code).toBe(1);
    const cj = JSON.parse(c.out) as { kind: string; verified: boolean; problems: string[] };
    // Its manifest says campaign but it holds no campaign.json: nothing to name.
    expect(cj).toMatchObject({ file: campaign, kind: 'campaign', verified: false, subject: null });
    expect(cj.problems.length).toBeGreaterThan(0);
  });

  it('reads the Punkt parameters from --punkt when given', async () => {
    const zip = await zipOf('punkt', 3, ['One.'], 'cancelled');
    await expect(capture([zip, '--punkt', path.join(dir, 'no-punkt-here')])).rejects.toThrow(/no-punkt-here/);
    expect(await capture([zip, '--punkt', path.join(SHARED, 'nltk', 'punkt_english')])).toMatchObject({ code: 0 });
  });

  it('fails a cancelled run whose manifest says it completed every prompt', async () => {
    const entries = await readZipEntries(await zipOf('claims', 3, ['One.', 'Two.'], 'cancelled'));
    const m = manifestOf(entries);
    setManifest(entries, { ...m, run: { ...m.run, status: 'completed', responses: 3 } });
    const bad = path.join(dir, 'claims-edited.zip');
    await rezip(entries, bad);
    const r = await capture([bad]);
    expect(r.code).toBe(1);
    expect(r.out.split('\n')[0]).toBe(`NOT verified ${bad}: ${r.out.split('\n').filter((l) => l.startsWith('  - ')).length} problems`);
    // A ZIP that does not verify still says which run it claims to hold.
    expect(r.out.split('\n')[1]).toMatch(/^ {2}the ZIP says: run run-claims: horizon\/tiny @ aaaaaaa, INT4, CPU backend, started /);
    expect(r.out).toContain('  - responses.jsonl: 2 rows, manifest.json run.responses says 3');
  });

  it('compares the rows of a run over part of the official set with the official file it finds', async () => {
    const entries = await readZipEntries(await zipOf('limit', 20, ['One.', 'Two.'], 'cancelled'));
    const lines = entries.get('input_data.jsonl')!.toString().split('\n');
    lines[9] = lines[9]!.replace('"prompt": "', '"prompt": "Edited. ');
    entries.set('input_data.jsonl', Buffer.from(lines.join('\n')));
    regenerate(entries, tools);
    const bad = path.join(dir, 'limit-edited.zip');
    await rezip(entries, bad);
    const r = await capture([bad]);
    expect(r.code).toBe(1);
    expect(r.out.split('\n')[0]).toBe(`NOT verified ${bad}: 1 problem`);
    expect(r.out).toContain('  - input_data.jsonl line 10: differs from row 10 of the official IFEval input_data.jsonl');
  });
});
