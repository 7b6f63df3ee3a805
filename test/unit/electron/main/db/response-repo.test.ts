import Database from 'better-sqlite3';
import { beforeEach, describe, expect, it } from 'vitest';

import { migrate, openDatabase } from '../../../../../electron/main/db/open-database.js';
import { allMigrations } from '../../../../../electron/main/db/migrations/all-migrations.js';
import type { StoredResponse } from '../../../../../electron/main/db/response-repo.js';
import { ResponseRepo } from '../../../../../electron/main/db/response-repo.js';
import { RunRepo } from '../../../../../electron/main/db/run-repo.js';
import { sampleRun } from './sample-run.js';


const resp = (key: number, position: number, strict: boolean[], loose: boolean[], text = `answer ${key}`): StoredResponse => ({
  key,
  position,
  prompt: `prompt ${key}`,
  response: text,
  tokens: 5,
  finishReason: 'stop',
  ttftMs: 10 * (position + 1),
  decodeTokensPerSecond: 100,
  verdicts: strict.map((s, i) => ({ instructionId: i === 0 ? 'punctuation:no_comma' : 'keywords:existence', kwargs: { n: i }, strict: s, loose: loose[i] ?? s })),
});

describe('RunRepo + ResponseRepo', () => {
  let db: Database.Database;
  let runs: RunRepo;
  let responses: ResponseRepo;
  beforeEach(() => {
    db = new Database(':memory:');
    db.pragma('foreign_keys = ON');
    migrate(db);
    runs = new RunRepo(db);
    responses = new ResponseRepo(db);
  });

  it('creates a run with its policy and moves it through statuses', () => {
    const run = runs.create(sampleRun('r1'), '2026-01-01T00:00:00.000Z');
    expect(run).toMatchObject({ id: 'r1', status: 'queued', policy: { maxNewTokens: 16, stopTokenIds: [0] }, finishedAt: null });
    runs.markRunning('r1', '2026-01-01T00:00:01.000Z');
    expect(runs.require('r1')).toMatchObject({ status: 'running', startedAt: '2026-01-01T00:00:01.000Z' });
    expect(runs.failInterrupted('app closed')).toBe(1);
    // Without a response, its start is the last sign of progress.
    expect(runs.require('r1')).toMatchObject({ status: 'failed', error: 'app closed', finishedAt: '2026-01-01T00:00:01.000Z' });
    runs.markRunning('r1');
    expect(runs.require('r1').finishedAt).toBeNull();
    responses.insertResponses('r1', [resp(7, 0, [true], [true])], { generatedTokens: 3, wallMs: 5 }, '2026-01-01T00:00:01.500Z');
    expect(runs.failInterrupted('app closed')).toBe(1);
    expect(runs.require('r1')).toMatchObject({ status: 'failed', finishedAt: '2026-01-01T00:00:01.500Z' });
    runs.finish('r1', 'completed', null, '2026-01-01T00:00:02.000Z');
    expect(runs.require('r1')).toMatchObject({ status: 'completed', error: null, finishedAt: '2026-01-01T00:00:02.000Z' });
    expect(() => runs.require('nope')).toThrow(/run nope not found/);
  });

  it('creates the run and its figures row together: a failed figures insert leaves no run', () => {
    db.exec(`CREATE TEMP TRIGGER no_figures BEFORE INSERT ON run_figures BEGIN SELECT RAISE(ABORT, 'no figures'); END`);
    expect(() => runs.create(sampleRun('r1'))).toThrow('no figures');
    expect(runs.get('r1')).toBeUndefined();
  });

  it('lists runs newest first, the later of two created in the same instant first', () => {
    runs.create(sampleRun('old'), '2026-01-01T00:00:00.000Z');
    runs.create(sampleRun('same-a'), '2026-01-02T00:00:00.000Z');
    runs.create(sampleRun('same-b'), '2026-01-02T00:00:00.000Z');
    expect(runs.list().map((r) => r.id)).toEqual(['same-b', 'same-a', 'old']);
  });

  it('resuming clears the last error and finish time but keeps the first start', () => {
    runs.create(sampleRun('r1'), '2026-01-01T00:00:00.000Z');
    runs.markRunning('r1', '2026-01-01T00:00:01.000Z');
    runs.finish('r1', 'failed', 'worker crashed', '2026-01-01T00:00:05.000Z');
    expect(runs.require('r1')).toMatchObject({ status: 'failed', error: 'worker crashed', finishedAt: '2026-01-01T00:00:05.000Z' });
    runs.markRunning('r1', '2026-01-01T00:01:00.000Z');
    expect(runs.require('r1')).toMatchObject({ status: 'running', error: null, startedAt: '2026-01-01T00:00:01.000Z', finishedAt: null });
  });

  it('ends an interrupted run at its last stored response, and leaves finished runs alone', () => {
    runs.create(sampleRun('r1'), '2026-01-01T00:00:00.000Z');
    runs.markRunning('r1', '2026-01-01T00:00:01.000Z');
    responses.insertResponses('r1', [resp(1, 0, [true], [true])], { generatedTokens: 1 }, '2026-01-01T00:00:03.000Z');
    responses.insertResponses('r1', [resp(2, 1, [true], [true])], { generatedTokens: 1 }, '2026-01-01T00:00:02.000Z');
    runs.create(sampleRun('queued'), '2026-01-01T00:00:00.000Z');
    runs.create(sampleRun('done'), '2026-01-01T00:00:00.000Z');
    runs.finish('done', 'completed', null, '2026-01-01T00:00:09.000Z');
    expect(runs.failInterrupted('app closed')).toBe(2);
    expect(runs.require('r1')).toMatchObject({ status: 'failed', error: 'app closed', finishedAt: '2026-01-01T00:00:03.000Z' });
    // Never started: its creation is the last sign of it.
    expect(runs.require('queued')).toMatchObject({ status: 'failed', error: 'app closed', finishedAt: '2026-01-01T00:00:00.000Z' });
    expect(runs.require('done')).toMatchObject({ status: 'completed', error: null, finishedAt: '2026-01-01T00:00:09.000Z' });
  });

  it('replaces the device fields each into its own column', () => {
    runs.create(sampleRun('r1'));
    runs.updateDevice('r1', 'cuda', 'NVIDIA H200', 'resident');
    expect(runs.require('r1')).toMatchObject({ backend: 'cuda', deviceLabel: 'NVIDIA H200', residency: 'resident' });
  });

  describe('orders and filters a page', () => {
    // Dataset positions follow IFEval's text-sorted keys (1019 before 102); the list orders keys as numbers.
    // Verdicts: [punctuation:no_comma, keywords:existence...] strict / loose.
    beforeEach(() => {
      runs.create(sampleRun('r1'));
      responses.insertBatch('r1', [
        resp(1019, 0, [true, false], [true, true]),
        resp(102, 1, [false], [true]),
        resp(25, 2, [true, true, false], [true, true, true]),
        resp(3, 3, [true, true], [true, true]),
      ], { generatedTokens: 4, wallMs: 1, peakMemoryBytes: 0, peakMemoryScope: null, h2dBytes: 0 });
    });
    const keys = (f: Parameters<ResponseRepo['page']>[1]) => responses.page('r1', f).items.map((r) => r.key);

    it.each([
      [{}, [3, 25, 102, 1019]],
      [{ descending: true }, [1019, 102, 25, 3]],
      [{ sortBy: 'instructions' as const }, [102, 3, 1019, 25]],
      [{ sortBy: 'instructions' as const, descending: true }, [25, 1019, 3, 102]],
      // Failing first, then by key.
      [{ sortBy: 'strict' as const }, [25, 102, 1019, 3]],
      [{ sortBy: 'loose' as const }, [3, 25, 102, 1019]],
      [{ sortBy: 'strict' as const, descending: true }, [3, 1019, 102, 25]],
      // With an instruction filter, the verdict is that instruction's: keywords:existence fails in 1019 (strict) and
      // in 25 (its second occurrence), passes in 3.
      [{ instructionId: 'keywords:existence', sortBy: 'strict' as const }, [25, 1019, 3]],
      [{ instructionId: 'keywords:existence', verdict: 'fail' as const, mode: 'strict' as const }, [25, 1019]],
      [{ instructionId: 'keywords:existence', verdict: 'pass' as const, mode: 'strict' as const }, [3]],
      [{ instructionId: 'punctuation:no_comma', verdict: 'fail' as const, mode: 'strict' as const }, [102]],
      // 1019 fails as a prompt (strict) but passes punctuation:no_comma: the prompt's verdict is not the filter's.
      [{ instructionId: 'punctuation:no_comma', verdict: 'pass' as const, mode: 'strict' as const }, [3, 25, 1019]],
      [{ verdict: 'pass' as const, mode: 'strict' as const }, [3]],
      // Dataset order, as horizon show lists them; every match with no limit.
      [{ sortBy: 'position' as const }, [1019, 102, 25, 3]],
      [{ sortBy: 'position' as const, verdict: 'fail' as const, mode: 'strict' as const, limit: null }, [1019, 102, 25]],
      [{ limit: 2 }, [3, 25]],
      [{ limit: 0 }, []],
    ])('%o gives %o', (f, expected) => {
      expect(keys(f)).toEqual(expected);
    });

    it('pages after ordering', () => {
      expect(keys({ limit: 2, offset: 1 })).toEqual([25, 102]);
      expect(keys({ sortBy: 'strict', limit: 2, offset: 2 })).toEqual([1019, 3]);
    });
  });

  it('sums the expert cache counts of the jobs that report them, and keeps null where none did', () => {
    runs.create(sampleRun('cpu'));
    responses.addJobFigures('cpu', { wallMs: 1, peakMemoryBytes: 0, peakMemoryScope: null, h2dBytes: 0 });
    expect(responses.figures('cpu').expertCache).toBeNull();
    runs.create(sampleRun('gpu'));
    responses.addJobFigures('gpu', { wallMs: 1, peakMemoryBytes: 5, peakMemoryScope: 'process', h2dBytes: 7, expertCache: { hits: 10, misses: 2, evictions: 1 } });
    // A job that ended without the worker's figures adds none.
    responses.addJobFigures('gpu', { wallMs: 1, peakMemoryBytes: 0, peakMemoryScope: null, h2dBytes: 0 });
    responses.addJobFigures('gpu', { wallMs: 1, peakMemoryBytes: 5, peakMemoryScope: 'process', h2dBytes: 7, expertCache: { hits: 5, misses: 0, evictions: 0 } });
    expect(responses.figures('gpu')).toMatchObject({ batches: 3, h2dBytes: 14, expertCache: { hits: 15, misses: 2, evictions: 1 } });
  });

  it("gives each response's timing in the order they were stored", () => {
    runs.create(sampleRun('r1'));
    responses.insertResponses('r1', [resp(9, 1, [true], [true])], { generatedTokens: 1 }, '2026-01-01T00:00:02.000Z');
    responses.insertResponses('r1', [{ ...resp(4, 0, [true], [true]), ttftMs: -1, decodeTokensPerSecond: 0 }], { generatedTokens: 1 }, '2026-01-01T00:00:01.000Z');
    expect(responses.performance('r1')).toEqual([
      { key: 4, finishedAt: '2026-01-01T00:00:01.000Z', tokens: 5, ttftMs: null, decodeTokensPerSecond: null },
      { key: 9, finishedAt: '2026-01-01T00:00:02.000Z', tokens: 5, ttftMs: 20, decodeTokensPerSecond: 100 },
    ]);
  });

  it('stores batches with verdicts and figures, and answers queries over them', () => {
    runs.create(sampleRun('r1'));
    responses.insertBatch('r1', [resp(1001, 0, [true, true], [true, true]), resp(1005, 2, [false, true], [true, true])], {
      generatedTokens: 10, wallMs: 100, peakMemoryBytes: 5, peakMemoryScope: 'process', h2dBytes: 7,
    });
    responses.insertBatch('r1', [resp(1003, 1, [false], [false], 'Needle here')], { generatedTokens: 5, wallMs: 50, peakMemoryBytes: 3, peakMemoryScope: 'device', h2dBytes: 1 });
    expect(responses.storedKeys('r1')).toEqual(new Set([1001, 1003, 1005]));
    expect(responses.all('r1').map((r) => [r.key, r.strictPass, r.loosePass])).toEqual([
      [1001, true, true],
      [1003, false, false],
      [1005, false, true],
    ]);
    expect(responses.passCounts('r1')).toEqual({ prompts: 3, promptsStrict: 1, promptsLoose: 2, instructions: 5, instructionsStrict: 3, instructionsLoose: 4 });
    expect(responses.byInstruction('r1')).toEqual([
      { instructionId: 'keywords:existence', count: 2, strictPassed: 2, loosePassed: 2 },
      { instructionId: 'punctuation:no_comma', count: 3, strictPassed: 1, loosePassed: 2 },
    ]);
    expect(responses.figures('r1')).toEqual({
      batches: 2, generatedTokens: 15, wallMs: 150, peakMemoryBytes: 5, peakMemoryScope: 'process', h2dBytes: 8, expertCache: null, meanTtftMs: 20, meanDecodeTokensPerSecond: 100,
    });
    expect(responses.page('r1', { verdict: 'fail', mode: 'strict' }).items.map((r) => r.key)).toEqual([1003, 1005]);
    expect(responses.page('r1', { verdict: 'fail', mode: 'loose' }).items.map((r) => r.key)).toEqual([1003]);
    expect(responses.page('r1', { instructionId: 'keywords:existence' }).total).toBe(2);
    expect(responses.page('r1', { text: 'NEEDLE' }).items.map((r) => r.key)).toEqual([1003]);
    expect(responses.page('r1', { limit: 1, offset: 1 })).toMatchObject({ total: 3, items: [{ key: 1003 }] });
    expect(responses.get('r1', 1005)?.verdicts).toEqual([
      { instructionId: 'punctuation:no_comma', kwargs: { n: 0 }, strict: false, loose: true },
      { instructionId: 'keywords:existence', kwargs: { n: 1 }, strict: true, loose: true },
    ]);
    // Case-insensitive beyond ASCII, as the query side's toLowerCase is.
    responses.insertResponses('r1', [resp(1007, 3, [true], [true], 'Une ÉCOLE über ΑΒΓ')], { generatedTokens: 1 });
    for (const text of ['école', 'ÉCOLE', 'ÜBER', 'αβγ']) expect(responses.page('r1', { text }).items.map((r) => r.key)).toEqual([1007]);
  });

  describe('deleting a run', () => {
    const rowsOf = (d: Database.Database, id: string) =>
      ['runs', 'run_figures', 'responses', 'verdicts'].map(
        (t) => d.prepare(`SELECT COUNT(*) FROM ${t} WHERE ${t === 'runs' ? 'id' : 'run_id'} = ?`).pluck().get(id) as number,
      );
    const storeTwo = (r: RunRepo, s: ResponseRepo, id: string) => {
      r.create(sampleRun(id));
      s.insertBatch(id, [resp(1, 0, [true, false], [true, true]), resp(2, 1, [true], [true])], {
        generatedTokens: 10, wallMs: 100, peakMemoryBytes: 0, peakMemoryScope: null, h2dBytes: 0,
      });
      r.finish(id, 'completed');
    };

    it('deletes the run, its figures, responses and verdicts, and no other run\'s', () => {
      storeTwo(runs, responses, 'r1');
      storeTwo(runs, responses, 'r2');
      expect(rowsOf(db, 'r1')).toEqual([1, 1, 2, 3]);
      expect(runs.delete('r1')).toEqual({ deleted: true, responses: 2 });
      expect(rowsOf(db, 'r1')).toEqual([0, 0, 0, 0]);
      expect(rowsOf(db, 'r2')).toEqual([1, 1, 2, 3]);
      expect(db.pragma('foreign_key_check')).toEqual([]);
      expect(runs.get('r1')).toBeUndefined();
      expect(runs.delete('r1')).toEqual({ deleted: false, status: 'missing' });
    });

    it('leaves no orphans on a connection without foreign keys (nothing cascades there)', () => {
      const bare = new Database(':memory:');
      bare.pragma('foreign_keys = OFF');
      migrate(bare);
      const r = new RunRepo(bare);
      storeTwo(r, new ResponseRepo(bare), 'r1');
      expect(r.delete('r1')).toEqual({ deleted: true, responses: 2 });
      expect(rowsOf(bare, 'r1')).toEqual([0, 0, 0, 0]);
    });

    it('refuses a queued or running run, deleting nothing', () => {
      runs.create(sampleRun('r1'));
      expect(runs.delete('r1')).toEqual({ deleted: false, status: 'queued' });
      runs.markRunning('r1');
      responses.insertResponses('r1', [resp(1, 0, [true], [true])], { generatedTokens: 1 });
      expect(runs.delete('r1')).toEqual({ deleted: false, status: 'running' });
      expect(rowsOf(db, 'r1')).toEqual([1, 1, 1, 1]);
      runs.finish('r1', 'cancelled');
      expect(runs.delete('r1')).toEqual({ deleted: true, responses: 1 });
    });

    it('is one transaction: a failure part-way keeps the whole run', () => {
      storeTwo(runs, responses, 'r1');
      db.exec(`CREATE TEMP TRIGGER keep_runs BEFORE DELETE ON runs BEGIN SELECT RAISE(ABORT, 'runs are kept'); END`);
      expect(() => runs.delete('r1')).toThrow('runs are kept');
      expect(rowsOf(db, 'r1')).toEqual([1, 1, 2, 3]);
      expect(responses.all('r1').map((x) => x.verdicts.length)).toEqual([2, 1]);
    });
  });

  it("keeps the scope of the job whose figure is the run's peak", () => {
    runs.create(sampleRun('r1'));
    const job = (peakMemoryBytes: number, peakMemoryScope: 'process' | 'device' | null) =>
      responses.addJobFigures('r1', { wallMs: 1, peakMemoryBytes, peakMemoryScope, h2dBytes: 0 });
    job(0, null); // a job that ended without the worker's figures
    expect(responses.figures('r1')).toMatchObject({ peakMemoryBytes: 0, peakMemoryScope: null });
    job(100, 'process');
    job(50, 'device');
    expect(responses.figures('r1')).toMatchObject({ peakMemoryBytes: 100, peakMemoryScope: 'process' });
    job(0, null);
    job(100, 'device'); // a tie keeps the scope already recorded
    expect(responses.figures('r1')).toMatchObject({ peakMemoryBytes: 100, peakMemoryScope: 'process' });
    job(300, 'device');
    expect(responses.figures('r1')).toMatchObject({ peakMemoryBytes: 300, peakMemoryScope: 'device', batches: 6 });
  });

  it('stores NUL characters as they are, and each lone surrogate as one U+FFFD (what UTF-8 can hold)', () => {
    runs.create(sampleRun('r1'));
    const texts = ['a\u0000b\u0000', 'x\uD800y', 'end\uDC00', '\uDC00\uD800', '😀 ok', 'plain'];
    responses.insertResponses('r1', texts.map((t, i) => ({ ...resp(i, i, [true], [true], t), prompt: `p${t}` })), { generatedTokens: 6 });
    const expected = ['a\u0000b\u0000', 'x\uFFFDy', 'end\uFFFD', '\uFFFD\uFFFD', '😀 ok', 'plain'];
    expect(responses.all('r1').map((r) => r.response)).toEqual(expected);
    expect(responses.all('r1').map((r) => r.prompt)).toEqual(expected.map((t) => `p${t}`));
    expect(responses.page('r1', { text: 'B\u0000' }).items.map((r) => r.key)).toEqual([0]);
  });

  it('rolls back the whole batch when one response is a duplicate', () => {
    runs.create(sampleRun('r1'));
    responses.insertBatch('r1', [resp(1, 0, [true], [true])], { generatedTokens: 1, wallMs: 1, peakMemoryBytes: 0, peakMemoryScope: null, h2dBytes: 0 });
    expect(() =>
      responses.insertBatch('r1', [resp(2, 1, [true], [true]), resp(1, 0, [true], [true])], { generatedTokens: 1, wallMs: 1, peakMemoryBytes: 0, peakMemoryScope: null, h2dBytes: 0 }),
    ).toThrow(/UNIQUE constraint failed/);
    expect(responses.storedKeys('r1')).toEqual(new Set([1]));
    expect(responses.figures('r1').batches).toBe(1);
  });

  it('counts passes and finds text in prompts too; a run without responses counts zeros', () => {
    runs.create(sampleRun('r1'));
    expect(responses.passCounts('r1')).toEqual({ prompts: 0, promptsStrict: 0, promptsLoose: 0, instructions: 0, instructionsStrict: 0, instructionsLoose: 0 });
    responses.insertResponses('r1', [{ ...resp(1, 0, [true], [true]), prompt: 'Write about OWLS' }, resp(2, 1, [true], [true])], { generatedTokens: 2 });
    expect(responses.page('r1', { text: 'owls' }).items.map((r) => r.key)).toEqual([1]);
  });

  it('counts the responses by how they ended, and lists those that ended one way with the other filters', () => {
    runs.create(sampleRun('r1'));
    expect(responses.endings('r1')).toEqual({ stop: 0, length: 0, cancelled: 0 });
    responses.insertResponses(
      'r1',
      [
        resp(1, 0, [true], [true]),
        { ...resp(2, 1, [false], [false]), finishReason: 'length' },
        { ...resp(3, 2, [true], [true]), finishReason: 'length' },
        resp(4, 3, [false], [false]),
      ],
      { generatedTokens: 4 },
    );
    expect(responses.endings('r1')).toEqual({ stop: 2, length: 2, cancelled: 0 });
    expect(responses.page('r1', { finish: 'length' })).toMatchObject({ total: 2, items: [{ key: 2 }, { key: 3 }] });
    expect(responses.page('r1', { finish: 'length', verdict: 'fail' })).toMatchObject({ total: 1, items: [{ key: 2, finishReason: 'length' }] });
    expect(responses.page('r1', { finish: 'stop', descending: true }).items.map((r) => r.key)).toEqual([4, 1]);
    expect(responses.endings('other-run')).toEqual({ stop: 0, length: 0, cancelled: 0 });
  });

  it('pages 50 responses by default and every one with a null limit', () => {
    runs.create(sampleRun('r1'));
    responses.insertResponses('r1', Array.from({ length: 60 }, (_, i) => resp(i, i, [true], [true])), { generatedTokens: 60 });
    expect(responses.page('r1', {}).items).toHaveLength(50);
    expect(responses.page('r1', { limit: null })).toMatchObject({ total: 60, items: { length: 60 } });
    expect(responses.page('r1', { limit: null, offset: 55 }).items.map((r) => r.key)).toEqual([55, 56, 57, 58, 59]);
  });

  it('gives every response in dataset order, not key order', () => {
    runs.create(sampleRun('r1'));
    responses.insertResponses('r1', [resp(3, 1, [true], [true]), resp(9, 0, [true], [true]), resp(1, 2, [true], [true])], { generatedTokens: 3 });
    expect(responses.all('r1').map((r) => r.key)).toEqual([9, 3, 1]);
  });

  it('passes on an error that is not SQLite\'s as it is', () => {
    runs.create(sampleRun('r1'));
    const bad = { ...resp(1, 0, [true], [true]), verdicts: [{ instructionId: 'x', kwargs: { n: 1n }, strict: true, loose: true }] };
    expect(() => responses.insertResponses('r1', [bad], { generatedTokens: 1 })).toThrow(/^Do not know how to serialize a BigInt$/);
    expect(responses.count('r1')).toBe(0);
  });

  it("rolls back a batch's responses when adding its job figures fails", () => {
    runs.create(sampleRun('r1'));
    db.exec(`CREATE TEMP TRIGGER no_jobs BEFORE UPDATE OF batches ON run_figures BEGIN SELECT RAISE(ABORT, 'no job figures'); END`);
    expect(() =>
      responses.insertBatch('r1', [resp(1, 0, [true], [true])], { generatedTokens: 4, wallMs: 1, peakMemoryBytes: 0, peakMemoryScope: null, h2dBytes: 0 }),
    ).toThrow('no job figures');
    expect(responses.count('r1')).toBe(0);
    expect(responses.figures('r1')).toMatchObject({ generatedTokens: 0, batches: 0 });
  });

  it('names the database file when a response cannot be stored (a full disk), storing nothing of it', () => {
    runs.create(sampleRun('r1'));
    // The database may not grow past its pages now: what SQLite says on a full disk.
    db.pragma(`max_page_count = ${db.pragma('page_count', { simple: true }) as number}`);
    const big = resp(1, 0, [true], [true], 'x'.repeat(64 * 1024));
    let error: unknown;
    try {
      responses.insertResponses('r1', [big], { generatedTokens: 9 });
    } catch (e) {
      error = e;
    }
    expect((error as Error).message).toBe(':memory:: database or disk is full');
    expect(((error as Error).cause as { code?: string }).code).toBe('SQLITE_FULL');
    expect(responses.count('r1')).toBe(0);
    expect(responses.figures('r1').generatedTokens).toBe(0);
  });

  it('opens a file database in WAL mode at the latest schema', async () => {
    const os = await import('node:os');
    const path = await import('node:path');
    const fs = await import('node:fs/promises');
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'horizon-db-'));
    const file = path.join(dir, 'sub', 'horizon.db');
    const fileDb = openDatabase(file);
    expect(fileDb.pragma('journal_mode', { simple: true })).toBe('wal');
    expect(fileDb.pragma('foreign_keys', { simple: true })).toBe(1);
    expect(fileDb.pragma('user_version', { simple: true })).toBe(allMigrations.at(-1)!.version);
    fileDb.close();
    await fs.rm(dir, { recursive: true, force: true });
  });
});
