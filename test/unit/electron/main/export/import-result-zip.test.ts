import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { PERF_FORMAT } from '../../../../../electron/common/perf-campaign.js';
import { migrate } from '../../../../../electron/main/db/open-database.js';
import { ResponseRepo } from '../../../../../electron/main/db/response-repo.js';
import { RunRepo } from '../../../../../electron/main/db/run-repo.js';
import { importResultZip } from '../../../../../electron/main/export/import-result-zip.js';
import { readZipEntries, verifyResultZip } from '../../../../../electron/main/export/verify-result-zip.js';
import { writeResultZip } from '../../../../../electron/main/export/write-result-zip.js';
import { resumeProblem } from '../../../../../electron/main/jobs/model-source.js';
import { qualityReportFile, writeQualityReport } from '../../../../../electron/main/prep/quality-report.js';
import type { StoredQualityReport } from '../../../../../electron/main/prep/quality-report.js';
import { runDetail } from '../../../../../electron/main/services/runs-service.js';
import { loadTextTools } from '../../../../../evals/ifeval/node/load-text-tools.js';
import type { TextTools } from '../../../../../evals/ifeval/text/text-tools.js';
import { manifestOf, refused, rehash, rezip, setManifest, sha256, storeRun } from './zip-fixtures.js';

const shared = path.resolve(import.meta.dirname, '..', '..', '..', '..', '..', '..', 'shared');
const NOW = '2026-12-06T19:00:00.000Z';

function freshDb() {
  const db = new Database(':memory:');
  migrate(db);
  return { db, runs: new RunRepo(db), responses: new ResponseRepo(db) };
}

describe('importing a result ZIP', () => {
  let dir: string;
  let tools: TextTools;
  let inputText: string;
  let zip: string;
  let source: ReturnType<typeof freshDb>;

  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'horizon-import-'));
    tools = await loadTextTools({ punktDir: path.join(shared, 'nltk', 'punkt_english') });
    const lines = readFileSync(path.join(shared, 'ifeval', 'input_data.jsonl'), 'utf8').split('\n').filter(Boolean);
    inputText = `${lines.slice(0, 5).join('\n')}\n`;
    // A CUDA run cancelled after four of five prompts, with figures of its own, as another machine would export it.
    source = freshDb();
    storeRun(source.db, 'run-abc', inputText, 5, ['A plain answer.', 'Yes, a comma.', 'THE END', 'hello\nworld'], tools, 'cancelled');
    source.runs.updateDevice('run-abc', 'cuda', 'NVIDIA H200', '64/64 experts resident');
    source.responses.addJobFigures('run-abc', { wallMs: 500, peakMemoryBytes: 9_000_000_000, peakMemoryScope: 'process', h2dBytes: 123_456 });
    zip = path.join(dir, 'run-abc.zip');
    await writeResultZip({ runs: source.runs, responses: source.responses, inputDataText: inputText, tools }, 'run-abc', zip);
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it('stores the run as the ZIP recorded it, and exports it again to the same bytes', async () => {
    const target = freshDb();
    const r = await importResultZip(zip, { ...target, tools }, NOW);
    expect(r.responses).toBe(4);
    const original = source.runs.require('run-abc');
    expect(r.run).toEqual({
      ...original,
      // The model stays on the machine that made the run.
      modelDir: '',
      packedDir: null,
      startedAt: original.createdAt,
      imported: { file: zip, sha256: sha256(readFileSync(zip)), importedAt: NOW },
    });
    expect(target.responses.all('run-abc')).toEqual(source.responses.all('run-abc'));
    expect(target.responses.figures('run-abc')).toEqual({ ...source.responses.figures('run-abc'), expertCache: null });
    expect(target.responses.passCounts('run-abc')).toEqual(source.responses.passCounts('run-abc'));

    const again = path.join(dir, 'again.zip');
    const written = await writeResultZip({ ...target, inputDataText: inputText, tools }, 'run-abc', again);
    expect(written.sha256).toBe(sha256(readFileSync(zip)));
  });

  it("carries a run's label: in the manifest only when it has one, imported, and exported again to the same bytes", async () => {
    expect((manifestOf(await readZipEntries(zip)) as { run: Record<string, unknown> }).run).not.toHaveProperty('label');
    const labelled = freshDb();
    storeRun(labelled.db, 'run-lab', inputText, 2, ['A plain answer.', 'Another.'], tools, 'completed');
    labelled.runs.setLabel('run-lab', 'baseline g32 · ✓');
    const first = path.join(dir, 'run-lab.zip');
    await writeResultZip({ ...labelled, inputDataText: inputText, tools }, 'run-lab', first);
    expect((manifestOf(await readZipEntries(first)) as { run: Record<string, unknown> }).run.label).toBe('baseline g32 · ✓');

    const target = freshDb();
    expect((await importResultZip(first, { ...target, tools }, NOW)).run.label).toBe('baseline g32 · ✓');
    const again = path.join(dir, 'run-lab-again.zip');
    expect((await writeResultZip({ ...target, inputDataText: inputText, tools }, 'run-lab', again)).sha256).toBe(sha256(readFileSync(first)));

    // A label the app would not store (another program's ZIP) is named, and nothing is stored.
    for (const [bad, shown] of [['two\nlines', '"two\\nlines"'], [7, '7'], ['', '""']] as const) {
      const entries = await readZipEntries(first);
      const m = manifestOf(entries) as ReturnType<typeof manifestOf> & Record<string, Record<string, unknown>>;
      m.run.label = bad;
      setManifest(entries, m);
      rehash(entries);
      const odd = path.join(dir, 'odd-label.zip');
      await rezip(entries, odd);
      const fresh = freshDb();
      await refused(
        importResultZip(odd, { ...fresh, tools }),
        'malformed',
        `${odd}: verifies, but its run cannot be stored: manifest.json run.label is ${shown}, not a label (one line of at most 80 characters) or absent`,
      );
      expect(fresh.runs.list()).toEqual([]);
    }
  });

  it("carries the INT4 check of an INT4 run's model as quality.json (v3): verified as a report, imported, exported again to the same bytes", async () => {
    // A model folder as preparation leaves it: the pack's manifest, and the check stored beside the model.
    const modelDir = path.join(dir, 'model');
    const packedDir = path.join(modelDir, 'int4-g32');
    await mkdir(packedDir, { recursive: true });
    await writeFile(path.join(packedDir, 'horizon-manifest.json'), '{"format":"qpacked-v2"}\n');
    const report: StoredQualityReport = {
      format: 'horizon-quality-v1', createdAt: NOW, int4Dir: 'int4-g32', backend: 'cpu', limit: 2, maxNewTokens: 8,
      packManifestSha256: sha256('{"format":"qpacked-v2"}\n'),
      prompts: 2, positions: 16, top1Agreement: 0.875, meanKl: 0.01, p99Kl: 0.1, meanAbsLogitDiff: 0.02, promptsWithoutDivergence: 1, medianFirstDivergence: 3,
      q4_0: { activations: 'q8_0', top1Agreement: 0.8125, meanKl: 0.02, p99Kl: 0.2, meanAbsLogitDiff: 0.03, meanKlRatioCi95: [0.4, 0.6], promptsInt4Closer: 2, promptsQ4_0Closer: 0, signTestP: 0.5 },
      perPrompt: [],
    };
    await writeQualityReport(qualityReportFile(modelDir, packedDir), report);
    const made = freshDb();
    // As the app records a prepared model's run: its checkpoint in source/, its pack beside it, the pack's files (and
    // so its manifest's sha256) in prepared.json.
    const prepared = (packSha: string) =>
      JSON.stringify({ format: 'horizon-prepared-v1', pack: { dir: 'int4-g32', files: [{ path: 'horizon-manifest.json', size: 24, sha256: packSha }] } });
    const runOf = { modelDir: path.join(modelDir, 'source'), packedDir, manifestJson: prepared(report.packManifestSha256!) };
    storeRun(made.db, 'run-q', inputText, 2, ['A plain answer.', 'Another.'], tools, 'completed', runOf);
    // A run of the pack before it was made again has another manifest hash recorded: the check is not of its pack.
    storeRun(made.db, 'run-old-pack', inputText, 2, ['A plain answer.', 'Another.'], tools, 'completed', { ...runOf, manifestJson: prepared('e'.repeat(64)) });
    const oldPack = path.join(dir, 'run-old-pack.zip');
    await writeResultZip({ ...made, inputDataText: inputText, tools }, 'run-old-pack', oldPack);
    expect((await readZipEntries(oldPack)).has('quality.json')).toBe(false);
    const first = path.join(dir, 'run-q.zip');
    await writeResultZip({ ...made, inputDataText: inputText, tools }, 'run-q', first);
    const entries = await readZipEntries(first);
    expect(manifestOf(entries)).toMatchObject({ format: 'horizon-result-v3' });
    expect(manifestOf(entries).files.at(-1)!.name).toBe('quality.json');
    expect(entries.get('quality.json')!.equals(readFileSync(qualityReportFile(modelDir, packedDir)))).toBe(true);
    const verified = await verifyResultZip(first, tools);
    expect(verified.problems).toEqual([]);
    expect(verified.quality).toEqual(report);

    const target = freshDb();
    const imported = await importResultZip(first, { ...target, tools }, NOW);
    expect(imported.run.qualityJson).toBe(entries.get('quality.json')!.toString('utf8'));
    expect(runDetail(imported.run, target.responses).carriedQuality).toEqual(report);
    expect(runDetail(made.runs.require('run-q'), made.responses).carriedQuality).toBeNull();
    const again = path.join(dir, 'run-q-again.zip');
    expect((await writeResultZip({ ...target, inputDataText: inputText, tools }, 'run-q', again)).sha256).toBe(sha256(readFileSync(first)));

    // A report that is not one, or one beside a BF16 run, is a problem even with every hash updated.
    for (const [edit, problem] of [
      [(e: Map<string, Buffer>) => e.set('quality.json', Buffer.from('{"format":"horizon-quality-v1"}')), 'quality.json: not an INT4 check report (horizon-quality-v1 with its figures)'],
      [
        (e: Map<string, Buffer>) => {
          const m = manifestOf(e) as ReturnType<typeof manifestOf> & { model: Record<string, unknown> };
          m.model.weights = 'bf16';
          setManifest(e, m);
        },
        'quality.json: an INT4 check, but manifest.json model.weights is "bf16"',
      ],
      [
        (e: Map<string, Buffer>) => {
          const m = manifestOf(e) as ReturnType<typeof manifestOf> & { model: Record<string, unknown> };
          m.model.manifest = JSON.parse(prepared('e'.repeat(64)));
          setManifest(e, m);
        },
        `quality.json: checked the pack whose horizon-manifest.json has sha256 ${report.packManifestSha256}, but the run used ${'e'.repeat(64)}`,
      ],
      [
        (e: Map<string, Buffer>) => {
          const m = manifestOf(e) as ReturnType<typeof manifestOf> & { model: Record<string, unknown> };
          m.model.manifest = { format: 'horizon-prepared-v1', pack: null };
          setManifest(e, m);
        },
        "quality.json: cannot be tied to the run's pack (manifest.json's model manifest records no int4-g32/horizon-manifest.json)",
      ],
    ] as const) {
      const e = await readZipEntries(first);
      edit(e);
      rehash(e);
      const odd = path.join(dir, 'odd-quality.zip');
      await rezip(e, odd);
      expect((await verifyResultZip(odd, tools)).problems).toContain(problem);
    }
    // A v2 ZIP may not hold it, nor a v3 ZIP go without it.
    const v2 = await readZipEntries(first);
    setManifest(v2, { ...manifestOf(v2), format: 'horizon-result-v2' } as ReturnType<typeof manifestOf>);
    await rezip(v2, path.join(dir, 'v2-quality.zip'));
    expect((await verifyResultZip(path.join(dir, 'v2-quality.zip'), tools)).problems).toContain(
      'manifest.json: files lists "quality.json", which is not a file of a result ZIP',
    );

    // Once the pack changes, the check is no longer of it: the run's ZIP goes without (v2).
    await writeFile(path.join(packedDir, 'horizon-manifest.json'), '{"format":"qpacked-v2","repacked":true}\n');
    const later = path.join(dir, 'run-q-later.zip');
    await writeResultZip({ ...made, inputDataText: inputText, tools }, 'run-q', later);
    const laterEntries = await readZipEntries(later);
    expect(manifestOf(laterEntries)).toMatchObject({ format: 'horizon-result-v2' });
    expect(laterEntries.has('quality.json')).toBe(false);
  });

  it('refuses a run stored already, saying where it came from, and stores nothing more', async () => {
    const target = freshDb();
    await importResultZip(zip, { ...target, tools }, NOW);
    await refused(importResultZip(zip, { ...target, tools }), 'duplicate', `${zip}: run run-abc is stored already, imported from ${zip} at ${NOW}`);
    await refused(importResultZip(zip, { ...source, tools }), 'duplicate', `${zip}: run run-abc is stored already: it was made on this machine`);
    expect(target.responses.count('run-abc')).toBe(4);
    expect(source.responses.count('run-abc')).toBe(4);
  });

  it('refuses a ZIP that does not verify, and a campaign ZIP, storing nothing', async () => {
    const entries = await readZipEntries(zip);
    const strict = entries.get('eval_results_strict.jsonl')!.toString().split('\n');
    strict[0] = strict[0]!.replace(/"follow_all_instructions": (true|false)/, (_, v: string) => `"follow_all_instructions": ${v === 'true' ? 'false' : 'true'}`);
    entries.set('eval_results_strict.jsonl', Buffer.from(strict.join('\n')));
    rehash(entries);
    const tampered = path.join(dir, 'tampered.zip');
    await rezip(entries, tampered);
    const target = freshDb();
    await refused(
      importResultZip(tampered, { ...target, tools }),
      'not-verified',
      `${tampered}: does not verify, so it is not imported (1 problem; the first: eval_results_strict.jsonl line 1 (key 1000): ` +
        'follow_all_instructions is true, re-scoring gives false)',
    );

    setManifest(entries, { ...manifestOf(entries), format: PERF_FORMAT } as never);
    const campaign = path.join(dir, 'campaign.zip');
    await rezip(entries, campaign);
    await refused(
      importResultZip(campaign, { ...target, tools }),
      'other-kind',
      `${campaign}: is a performance campaign ZIP, not a result ZIP`,
    );
    expect(target.runs.list()).toEqual([]);
  });

  it('refuses a verifying ZIP whose run the database cannot hold, naming every field', async () => {
    const entries = await readZipEntries(zip);
    // Fields the verifier does not read: a forger (or another program) can set them and keep every hash right.
    const m = manifestOf(entries) as ReturnType<typeof manifestOf> & Record<string, Record<string, unknown>>;
    m.run.id = '../../escape';
    m.model!.weights = 'fp8';
    m.backend!.backend = 'rocm';
    m.policy!.batch = 0;
    setManifest(entries, m);
    const lines = entries.get('responses.jsonl')!.toString().split('\n');
    lines[1] = lines[1]!.replace('"finish_reason":"stop"', '"finish_reason":"eos"');
    entries.set('responses.jsonl', Buffer.from(lines.join('\n')));
    rehash(entries);
    const odd = path.join(dir, 'odd.zip');
    await rezip(entries, odd);
    const target = freshDb();
    await refused(
      importResultZip(odd, { ...target, tools }),
      'malformed',
      `${odd}: verifies, but its run cannot be stored: manifest.json run.id is "../../escape", not a run id (letters, digits, . _ + -; not starting with perf-, which names campaigns); ` +
        'manifest.json model.weights is "fp8", not int4 or bf16; manifest.json backend.backend is "rocm", not cpu, cuda or pending; ' +
        'manifest.json policy.batch is 0, not a count of at least 1; ' +
        'responses.jsonl line 2: finish_reason is "eos", not stop, length or cancelled',
    );
    expect(target.runs.list()).toEqual([]);
  });

  it("refuses a run named as campaigns are, whose ZIP in exports/ would take a campaign's name", async () => {
    const entries = await readZipEntries(zip);
    const m = manifestOf(entries) as ReturnType<typeof manifestOf> & Record<string, Record<string, unknown>>;
    m.run.id = 'perf-20261206T205311-c5b042';
    setManifest(entries, m);
    rehash(entries);
    const odd = path.join(dir, 'perf-named.zip');
    await rezip(entries, odd);
    const target = freshDb();
    await refused(
      importResultZip(odd, { ...target, tools }),
      'malformed',
      `${odd}: verifies, but its run cannot be stored: manifest.json run.id is "perf-20261206T205311-c5b042", ` +
        'not a run id (letters, digits, . _ + -; not starting with perf-, which names campaigns)',
    );
    expect(target.runs.list()).toEqual([]);
  });

  it("reads a ZIP from an earlier build: backend 'CUDA', peak_vram_bytes and no scope", async () => {
    const entries = await readZipEntries(zip);
    const m = manifestOf(entries) as ReturnType<typeof manifestOf> & Record<string, Record<string, unknown>>;
    m.backend!.backend = 'CUDA';
    setManifest(entries, m);
    const { peak_memory_bytes: peak, peak_memory_scope: _scope, ...perf } = JSON.parse(entries.get('performance.json')!.toString()) as Record<string, unknown>;
    entries.set('performance.json', Buffer.from(JSON.stringify({ ...perf, backend: 'CUDA', peak_vram_bytes: peak })));
    rehash(entries);
    const old = path.join(dir, 'old.zip');
    await rezip(entries, old);
    const target = freshDb();
    const { run } = await importResultZip(old, { ...target, tools }, NOW);
    expect(run.backend).toBe('cuda');
    expect(target.responses.figures('run-abc')).toMatchObject({ peakMemoryBytes: 9_000_000_000, peakMemoryScope: null, h2dBytes: 123_456 });
  });

  it('names the file when it is not there, or not a regular file', async () => {
    const missing = path.join(dir, 'missing.zip');
    await expect(importResultZip(missing, { ...freshDb(), tools })).rejects.toThrow(`${missing}: not a readable ZIP (ENOENT`);
    const fifo = path.join(dir, 'fifo.zip');
    execFileSync('mkfifo', [fifo]);
    await expect(importResultZip(fifo, { ...freshDb(), tools })).rejects.toThrow(`${fifo}: not a readable ZIP (${fifo}: not a regular file)`);
  });

  it('leaves an imported run out of resuming: its model is on another machine', async () => {
    const target = freshDb();
    const { run } = await importResultZip(zip, { ...target, tools }, NOW);
    expect(await resumeProblem(run, run.datasetSha256)).toEqual({
      code: 'IMPORTED',
      message: `run run-abc was imported from ${zip}: it was made on another machine, and its model is not here to resume with`,
    });
  });
});
