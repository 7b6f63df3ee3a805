import { readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

import Database from 'better-sqlite3';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';

import type { RunProgress } from '../../../../../electron/common/ipc-contract.js';
import type { Result } from '../../../../../electron/common/result.js';
import { err, ok } from '../../../../../electron/common/result.js';
import type { GenerationBatchResult, GenerationItemResult, ItemEvent, TokenEvent, WorkerRequest } from '../../../../../electron/common/worker-protocol.js';
import { migrate } from '../../../../../electron/main/db/open-database.js';
import { ResponseRepo } from '../../../../../electron/main/db/response-repo.js';
import { RunRepo } from '../../../../../electron/main/db/run-repo.js';
import type { EvalRunDeps, RuntimeClient } from '../../../../../electron/main/jobs/eval-run.js';
import { createEvalRun, estimateEtaSeconds, executeEvalRun } from '../../../../../electron/main/jobs/eval-run.js';
import type { ModelSource } from '../../../../../electron/main/jobs/model-source.js';
import { runAccuracies } from '../../../../../electron/main/jobs/run-accuracies.js';
import { WorkerClient } from '../../../../../electron/main/worker-client.js';
import { parsePromptRecords } from '../../../../../evals/ifeval/dataset.js';
import { loadTextTools } from '../../../../../evals/ifeval/node/load-text-tools.js';
import { scorePrompt } from '../../../../../evals/ifeval/score.js';
import type { TextTools } from '../../../../../evals/ifeval/text/text-tools.js';
import type { PromptRecord } from '../../../../../evals/ifeval/types.js';
import { inProcessWorkers } from '../in-process-spawner.js';
import { createScriptedEngine } from '../../worker/scripted-engine.js';
import { EOS_ID, writeTinyTokenizer } from '../../worker/tiny-tokenizer.js';

const shared = path.resolve(import.meta.dirname, '..', '..', '..', '..', '..', '..', 'shared');

/** Replies that pass some checks and fail others: a comma fails punctuation:no_comma. */
const reply = (ids: readonly number[]) => (ids.length % 2 === 0 ? 'short answer' : 'yes, with a comma');

/** A temporary model folder with the tiny tokenizer, seven IFEval prompts (no language checks) and the text tools. */
async function fixture(prefix: string): Promise<{ dir: string; records: PromptRecord[]; tools: TextTools; source: ModelSource }> {
  const dir = await mkdtemp(path.join(os.tmpdir(), prefix));
  await writeTinyTokenizer(dir);
  const lines = readFileSync(path.join(shared, 'ifeval', 'input_data.jsonl'), 'utf8').split('\n').filter(Boolean);
  const records = parsePromptRecords(lines.slice(0, 40).join('\n'), 'input_data.jsonl')
    .filter((r) => !r.instruction_id_list.includes('language:response_language'))
    .slice(0, 7);
  const tools = await loadTextTools({ punktDir: path.join(shared, 'nltk', 'punkt_english') });
  const source: ModelSource = {
    modelId: 'local:tiny/int4-g32', repo: 'local/tiny', revision: 'r', modelDir: dir, packedDir: path.join(dir, 'int4-g32'),
    weights: 'int4', manifestJson: '{}', manifestSha256: '0'.repeat(64),
  };
  return { dir, records, tools, source };
}

describe('eval-run job', () => {
  let dir: string;
  let records: PromptRecord[];
  let tools: TextTools;
  let source: ModelSource;
  let db: Database.Database;
  let generated: string[];
  let loads: (number | undefined)[];
  let budgets: (number | undefined)[];
  let sequences: (number | undefined)[];
  let cudaDevices: (number | undefined)[];
  /** policy.batch of each generate job. */
  let batches: (number | undefined)[];
  let tokenDelayMs = 0;
  /** The scripted replies of the engine created next (reset to `reply` before each test). */
  let replyOf: (ids: readonly number[]) => string;
  /** Generate calls (counted over all workers) that fail as a lost GPU context does; others that fail plainly. */
  let deviceFaultAt: number[];
  let plainErrorAt: number[];
  /** Generate calls that hang without a token (a GPU that stopped answering). */
  let hangAt: number[];
  /** Loads asking for more sequences than this fail (as out of device memory would). */
  let loadFailsAbove: number;
  let loadDelayMs: number;
  let disposed: number;
  let deps: EvalRunDeps & { client: WorkerClient; workers: ReturnType<typeof inProcessWorkers> };

  beforeAll(async () => {
    ({ dir, records, tools, source } = await fixture('horizon-evalrun-'));
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  beforeEach(() => {
    db = new Database(':memory:');
    db.pragma('foreign_keys = ON');
    migrate(db);
    generated = [];
    loads = [];
    budgets = [];
    sequences = [];
    cudaDevices = [];
    batches = [];
    deviceFaultAt = [];
    plainErrorAt = [];
    hangAt = [];
    loadFailsAbove = Infinity;
    loadDelayMs = 0;
    disposed = 0;
    replyOf = reply;
    const workers = inProcessWorkers(() => {
      const engine = createScriptedEngine({ reply: (ids) => replyOf(ids), tokenDelayMs });
      return {
        probe: engine.probe,
        load: async (req) => {
          loads.push(req.maxContext);
          budgets.push(req.expertBudgetBytes);
          sequences.push(req.maxSequences);
          cudaDevices.push(req.cudaDevice);
          if (loadDelayMs > 0) await new Promise((resolve) => setTimeout(resolve, loadDelayMs));
          if ((req.maxSequences ?? 0) > loadFailsAbove) throw new Error('CUDA out of memory for the KV cache');
          const m = await engine.load(req);
          let fault = '';
          return {
            ...m,
            fault: () => fault,
            dispose: () => void disposed++,
            generate: (prompts, policy, onToken, signal) => {
              generated.push(...prompts.map((p) => String(p.length)));
              batches.push(policy.batch);
              if (deviceFaultAt.includes(generated.length)) {
                fault = 'CUDA backend: read tokens: an illegal memory access was encountered';
                return Promise.reject(new Error(fault));
              }
              if (plainErrorAt.includes(generated.length)) return Promise.reject(new Error('prompt 0 is empty'));
              if (hangAt.includes(generated.length)) return new Promise(() => {});
              return m.generate(prompts, policy, onToken, signal);
            },
          };
        },
      };
    });
    const client = new WorkerClient(workers.spawner);
    deps = { runs: new RunRepo(db), responses: new ResponseRepo(db), runtime: client, records, tools, client, workers };
  });

  const newRun = (runId: string, batch = 2) =>
    createEvalRun(deps, { runId, source, limit: 5, batch, maxNewTokens: 32, appVersion: '0.1.0', datasetSha256: 'x' });

  it('generates, scores and stores every prompt with progress', async () => {
    const run = await newRun('r1');
    expect(run).toMatchObject({ status: 'queued', total: 5, backend: 'pending', policy: { stopTokenIds: [256], batch: 2, maxNewTokens: 32 } });
    const events: RunProgress[] = [];
    let device = '';
    const final = await executeEvalRun(deps, 'r1', { onProgress: (p) => events.push(p), onLoaded: (i) => (device = i.deviceLabel) });
    expect(final).toMatchObject({ status: 'completed', backend: 'cpu', deviceLabel: 'CPU', residency: 'host' });
    expect(device).toBe('CPU');
    const stored = deps.responses.all('r1');
    expect(stored.map((r) => r.key)).toEqual(records.slice(0, 5).map((r) => r.key));
    for (const s of stored) {
      const rec = records.find((r) => r.key === s.key)!;
      const expected = scorePrompt(rec, s.response, tools);
      expect(s.verdicts.map((v) => v.strict)).toEqual(expected.strict);
      expect(s.verdicts.map((v) => v.loose)).toEqual(expected.loose);
      expect(s.finishReason).toBe('stop');
      expect(['short answer', 'yes, with a comma']).toContain(s.response);
    }
    // Stored one by one as each finishes, from one generate job running at most `batch` (2) prompts at once; the
    // second event says the model has loaded.
    const done = events.filter((e) => e.status === 'running').map((e) => e.done);
    expect(done).toEqual([0, 0, 1, 2, 3, 4, 5]);
    // The device is named from the model's load on: no re-reading of the run needed.
    expect(events.map((e) => e.backendLabel ?? null)).toEqual([null, ...Array<string>(events.length - 1).fill('CPU backend')]);
    expect(events.map((e) => e.residency ?? null)).toEqual([null, ...Array<string>(events.length - 1).fill('host')]);
    expect(events.at(-1)).toMatchObject({ status: 'completed', done: 5, total: 5, etaSeconds: 0 });
    // Each event carries the accuracies so far: none before the first response, the run's own at the end.
    expect(events[0]?.accuracies).toBeNull();
    expect(events.filter((e) => e.done > 0).every((e) => e.accuracies && e.accuracies.promptStrict >= 0)).toBe(true);
    expect(events.at(-1)?.accuracies).toEqual(runAccuracies(deps.responses, 'r1'));
    // No estimate until a whole wave of `batch` (2) prompts has finished.
    expect(events.filter((e) => e.status === 'running').map((e) => e.etaSeconds === null)).toEqual([true, true, true, false, false, false, false]);
    // No speed before a token; the whole run's generating time never goes back, and ends as the figures say.
    expect(events.slice(0, 2).map((e) => [e.tokensPerSecond, e.elapsedSeconds])).toEqual([[null, 0], [null, 0]]);
    expect(events.slice(2).every((e) => e.tokensPerSecond !== null && e.tokensPerSecond > 0)).toBe(true);
    const f = deps.responses.figures('r1');
    for (let i = 1; i < events.length - 1; i++) expect(events[i]!.elapsedSeconds).toBeGreaterThanOrEqual(events[i - 1]!.elapsedSeconds);
    expect(events.at(-1)?.elapsedSeconds).toBe(f.wallMs / 1000);
    expect(events.at(-1)?.tokensPerSecond).toBeCloseTo(f.generatedTokens / (f.wallMs / 1000), 6);
    expect(batches).toEqual([2]);
    expect(generated).toHaveLength(5);
    expect(deps.responses.figures('r1')).toMatchObject({ batches: 1 });
    expect(deps.responses.figures('r1').generatedTokens).toBe(stored.reduce((n, r) => n + r.tokens, 0));
  });

  it('loads the model with KV room for its longest prompt plus the token budget, and reloads only for more', async () => {
    // Tiny byte-level tokenizer: the chat form is 3 special tokens, the prompt's UTF-8 bytes and 3 newlines.
    const longest = Math.max(...records.slice(0, 5).map((r) => 6 + Buffer.byteLength(r.prompt, 'utf8')));
    const expected = Math.ceil((longest + 32) / 256) * 256;
    await newRun('c1');
    await executeEvalRun(deps, 'c1');
    expect(loads).toEqual([expected]);
    await newRun('c2');
    await executeEvalRun(deps, 'c2');
    expect(loads).toEqual([expected]);
    await createEvalRun(deps, { runId: 'c3', source, limit: 5, batch: 2, maxNewTokens: expected, appVersion: '0.1.0', datasetSha256: 'x' });
    const bigger = await executeEvalRun(deps, 'c3');
    expect(bigger.status).toBe('completed');
    expect(loads).toEqual([expected, Math.ceil((longest + expected) / 256) * 256]);
    expect(sequences).toEqual([2, 2]);
  });

  it("reserves KV for the run's batch, reloading only for a larger one", async () => {
    for (const [runId, batch] of [['s1', 3], ['s2', 2], ['s3', 5]] as const) {
      await createEvalRun(deps, { runId, source, limit: 5, batch, maxNewTokens: 8, appVersion: '0.1.0', datasetSha256: 'x' });
      expect((await executeEvalRun(deps, runId)).status).toBe('completed');
    }
    expect(sequences).toEqual([3, 5]);
  });

  it('records a GPU expert budget in the policy, passes it to the load and reloads when it changes', async () => {
    const budget = 3 * 2 ** 30;
    const c1 = await createEvalRun(deps, { runId: 'b1', source, limit: 2, maxNewTokens: 8, expertBudgetBytes: budget, appVersion: '0.1.0', datasetSha256: 'x' });
    expect(c1.policy.expertBudgetBytes).toBe(budget);
    await executeEvalRun(deps, 'b1');
    const c2 = await createEvalRun(deps, { runId: 'b2', source, limit: 2, maxNewTokens: 8, appVersion: '0.1.0', datasetSha256: 'x' });
    expect(c2.policy.expertBudgetBytes).toBeNull();
    await executeEvalRun(deps, 'b2');
    expect(budgets).toEqual([budget, undefined]);
    await expect(
      createEvalRun(deps, { runId: 'b3', source, limit: 2, expertBudgetBytes: 0.5, appVersion: '0.1.0', datasetSha256: 'x' }),
    ).rejects.toThrow(/expert budget bytes must be an integer/);
  });

  it('records the CUDA device asked for, passes it to the load and reloads on another device', async () => {
    const d1 = await createEvalRun(deps, { runId: 'd1', source, limit: 2, maxNewTokens: 8, cudaDevice: 1, appVersion: '0.1.0', datasetSha256: 'x' });
    expect(d1.policy.cudaDevice).toBe(1);
    await executeEvalRun(deps, 'd1');
    const d2 = await createEvalRun(deps, { runId: 'd2', source, limit: 2, maxNewTokens: 8, cudaDevice: 1, appVersion: '0.1.0', datasetSha256: 'x' });
    expect(d2.policy.cudaDevice).toBe(1);
    await executeEvalRun(deps, 'd2');
    const d3 = await createEvalRun(deps, { runId: 'd3', source, limit: 2, maxNewTokens: 8, appVersion: '0.1.0', datasetSha256: 'x' });
    expect(d3.policy.cudaDevice).toBeNull();
    await executeEvalRun(deps, 'd3');
    expect(cudaDevices).toEqual([1, undefined]); // d2 reused d1's load
    expect(deps.runs.require('d2').status).toBe('completed');
    await expect(
      createEvalRun(deps, { runId: 'd4', source, limit: 2, cudaDevice: 64, appVersion: '0.1.0', datasetSha256: 'x' }),
    ).rejects.toThrow(/CUDA device must be an integer in 0..63/);
  });

  it('streams the partial text of an in-flight prompt in progress events', async () => {
    tokenDelayMs = 10;
    try {
      await newRun('rp');
      const partials: { key: number; text: string }[] = [];
      await executeEvalRun(deps, 'rp', { partialIntervalMs: 0, onProgress: (p) => p.partial && partials.push(p.partial) });
      expect(partials.length).toBeGreaterThan(0);
      for (const p of partials) {
        const final = deps.responses.get('rp', p.key)!.response;
        expect(final.startsWith(p.text)).toBe(true);
      }
      expect(partials.some((p) => p.text.length > 0 && p.text.length < deps.responses.get('rp', p.key)!.response.length)).toBe(true);
    } finally {
      tokenDelayMs = 0;
    }
  });

  it('streams partial texts without U+FFFD for a character whose bytes are still being generated', async () => {
    tokenDelayMs = 2;
    replyOf = () => '€€€ ünï €';
    try {
      await newRun('rp-utf8');
      const partials: { key: number; text: string }[] = [];
      await executeEvalRun(deps, 'rp-utf8', { partialIntervalMs: 0, onProgress: (p) => p.partial && partials.push(p.partial) });
      expect(partials.length).toBeGreaterThan(3);
      for (const p of partials) {
        expect(p.text).not.toContain('\uFFFD');
        expect('€€€ ünï €'.startsWith(p.text)).toBe(true);
      }
    } finally {
      tokenDelayMs = 0;
    }
  });

  it('streams no partial text for a prompt whose response is already stored', async () => {
    tokenDelayMs = 1;
    try {
      await newRun('rp-late');
      const late: number[] = [];
      let partials = 0;
      await executeEvalRun(deps, 'rp-late', {
        partialIntervalMs: 0,
        onProgress: (p) => {
          if (!p.partial) return;
          partials++;
          if (deps.responses.get('rp-late', p.partial.key)) late.push(p.partial.key);
        },
      });
      expect(partials).toBeGreaterThan(0);
      expect(late).toEqual([]);
    } finally {
      tokenDelayMs = 0;
    }
  });

  it('stores the generating time with each response, so a process killed mid-job keeps time and tokens together', async () => {
    tokenDelayMs = 2;
    try {
      await newRun('r-wall');
      const seen: { batches: number; wallMs: number; generatedTokens: number }[] = [];
      const final = await executeEvalRun(deps, 'r-wall', { onResponse: () => seen.push(deps.responses.figures('r-wall')) });
      expect(final.status).toBe('completed');
      // Before the job's end (batches still 0) every stored response already brought its time with its tokens.
      expect(seen).toHaveLength(5);
      for (const f of seen) expect(f).toMatchObject({ batches: 0 });
      expect(seen[0]!.generatedTokens).toBeGreaterThan(0);
      expect(seen[0]!.wallMs).toBeGreaterThan(0);
      for (let i = 1; i < seen.length; i++) expect(seen[i]!.wallMs).toBeGreaterThanOrEqual(seen[i - 1]!.wallMs);
      const end = deps.responses.figures('r-wall');
      expect(end.batches).toBe(1);
      expect(end.wallMs).toBeGreaterThanOrEqual(seen.at(-1)!.wallMs);
    } finally {
      tokenDelayMs = 0;
    }
  });

  it('cancels, keeping the responses already finished, and resumes without regenerating them', async () => {
    tokenDelayMs = 2;
    try {
      await newRun('r2');
      const controller = new AbortController();
      const first = await executeEvalRun(deps, 'r2', {
        signal: controller.signal,
        onResponse: () => controller.abort(),
      });
      expect(first.error).toBeNull();
      expect(first.status).toBe('cancelled');
      const kept = deps.responses.count('r2');
      expect(kept).toBeGreaterThanOrEqual(1);
      expect(kept).toBeLessThanOrEqual(2); // the prompts generating with the first to finish
      expect(generated).toHaveLength(5);
      const resumed = await executeEvalRun(deps, 'r2');
      expect(resumed.status).toBe('completed');
      expect(deps.responses.count('r2')).toBe(5);
      expect(generated).toHaveLength(5 + 5 - kept);
    } finally {
      tokenDelayMs = 0;
    }
  });

  it('after a resume: elapsed goes on from the time stored by earlier sessions, the speed is this session\'s', async () => {
    tokenDelayMs = 2;
    try {
      await newRun('r-resume-time');
      const controller = new AbortController();
      const first: RunProgress[] = [];
      const cancelled = await executeEvalRun(deps, 'r-resume-time', {
        signal: controller.signal,
        onProgress: (p) => first.push(p),
        onResponse: () => controller.abort(),
      });
      expect(cancelled.status).toBe('cancelled');
      const stored = deps.responses.figures('r-resume-time');
      expect(stored.wallMs).toBeGreaterThan(0);
      // The cancelled session's last event: its time as stored, its own speed (not 0 for being over).
      expect(first.at(-1)).toMatchObject({ status: 'cancelled', elapsedSeconds: stored.wallMs / 1000 });
      expect(first.at(-1)?.tokensPerSecond).toBeGreaterThan(0);

      const second: RunProgress[] = [];
      const resumed = await executeEvalRun(deps, 'r-resume-time', { onProgress: (p) => second.push(p) });
      expect(resumed.status).toBe('completed');
      // Before this session has generated (the model loading): the earlier time, and no speed yet.
      expect(second.slice(0, 2).map((e) => [e.status, e.elapsedSeconds, e.tokensPerSecond])).toEqual([
        ['running', stored.wallMs / 1000, null],
        ['running', stored.wallMs / 1000, null],
      ]);
      for (const e of second.slice(2)) expect(e.elapsedSeconds).toBeGreaterThan(stored.wallMs / 1000);
      const end = deps.responses.figures('r-resume-time');
      expect(second.at(-1)).toMatchObject({ status: 'completed', elapsedSeconds: end.wallMs / 1000 });
      // This session's tokens over this session's time.
      expect(second.at(-1)?.tokensPerSecond).toBeCloseTo(
        (end.generatedTokens - stored.generatedTokens) / ((end.wallMs - stored.wallMs) / 1000),
        6,
      );
    } finally {
      tokenDelayMs = 0;
    }
  });

  it('ends the run as failed on a worker crash, and a resume restarts the worker', async () => {
    await newRun('r3');
    let tokens = 0;
    deps.client.onToken(() => {
      if (++tokens === 30) deps.workers.crash();
    });
    const crashed = await executeEvalRun(deps, 'r3');
    expect(crashed.status).toBe('failed');
    expect(crashed.error).toMatch(/WORKER_CRASHED: the runtime worker stopped unexpectedly \(signal SIGKILL\)/);
    const kept = deps.responses.count('r3');
    expect(kept).toBeGreaterThan(0);
    expect(kept).toBeLessThan(5);
    expect(deps.client.state).toBe('crashed');
    // The crashed job's tokens are stored, so is its time (main's measure: the worker's never came).
    const afterCrash = deps.responses.figures('r3');
    expect(afterCrash.batches).toBe(1);
    expect(afterCrash.wallMs).toBeGreaterThan(0);
    expect(afterCrash.generatedTokens).toBeGreaterThan(0);
    const resumed = await executeEvalRun(deps, 'r3');
    expect(deps.workers.spawned).toBe(2);
    expect(resumed).toMatchObject({ status: 'completed', error: null });
    expect(deps.responses.count('r3')).toBe(5);
    expect(deps.responses.figures('r3')).toMatchObject({ batches: 2 });
  });

  it('completes when a listener throws (a window closing): the responses were stored', async () => {
    await newRun('r10');
    const final = await executeEvalRun(deps, 'r10', {
      onResponse: () => {
        throw new Error('Object has been destroyed');
      },
    });
    expect(final).toMatchObject({ status: 'completed', error: null });
    expect(deps.responses.count('r10')).toBe(5);
  });

  it('marks the run started, and stores each response at its dataset position with its prompt\'s kwargs', async () => {
    await newRun('r-rows');
    const final = await executeEvalRun(deps, 'r-rows');
    expect(final).toMatchObject({ status: 'completed', error: null });
    expect(final.startedAt).not.toBeNull();
    for (const s of deps.responses.all('r-rows')) {
      const i = records.findIndex((r) => r.key === s.key);
      expect(s.position).toBe(i);
      expect(s.verdicts.map((v) => v.kwargs)).toEqual(records[i]!.kwargs);
    }
  });

  it('resuming a run with every response stored completes it without loading or generating', async () => {
    await newRun('r-all');
    expect((await executeEvalRun(deps, 'r-all')).status).toBe('completed');
    deps.runs.finish('r-all', 'failed', 'app closed');
    const [loaded, made] = [loads.length, generated.length];
    expect(await executeEvalRun(deps, 'r-all')).toMatchObject({ status: 'completed', error: null });
    expect([loads.length, generated.length]).toEqual([loaded, made]);
  });

  it('fails the run when a response cannot be stored, keeping those stored; a resume completes it', async () => {
    await newRun('r-store');
    db.exec(`CREATE TEMP TRIGGER no_third BEFORE INSERT ON responses WHEN (SELECT COUNT(*) FROM responses) >= 2
      BEGIN SELECT RAISE(ABORT, 'disk trouble'); END`);
    const failed = await executeEvalRun(deps, 'r-store');
    expect(failed).toMatchObject({ status: 'failed', error: 'eval-run: storing a response failed: :memory:: disk trouble' });
    expect(deps.responses.count('r-store')).toBe(2);
    db.exec('DROP TRIGGER no_third');
    expect((await executeEvalRun(deps, 'r-store')).status).toBe('completed');
    expect(deps.responses.count('r-store')).toBe(5);
  });

  it('refuses a limit, batch or token budget out of range, and records the limit', async () => {
    const make = (o: { limit?: number; batch?: number; maxNewTokens?: number }) =>
      createEvalRun(deps, { runId: `r-range-${JSON.stringify(o)}`, source, appVersion: '0.1.0', datasetSha256: 'x', ...o });
    await expect(make({ limit: records.length + 1 })).rejects.toThrow(`limit must be an integer in 1..${records.length}`);
    // The one set of run limits (electron/common/run-settings.ts), as the app and the CLI check them.
    await expect(make({ batch: 257 })).rejects.toThrow('batch must be an integer in 1..256');
    await expect(make({ batch: 1.5 })).rejects.toThrow('batch must be an integer in 1..256');
    await expect(make({ maxNewTokens: 0 })).rejects.toThrow('max new tokens must be an integer in 1..4096');
    await expect(make({ maxNewTokens: 4097 })).rejects.toThrow('max new tokens must be an integer in 1..4096');
    expect(await make({ limit: 3 })).toMatchObject({ total: 3, policy: { limit: 3 } });
    expect(await make({})).toMatchObject({ total: records.length, policy: { limit: null } });
  });

  it('after a load that failed (the worker drops its model first), the next run loads its model again', async () => {
    await newRun('r6', 2);
    expect((await executeEvalRun(deps, 'r6')).status).toBe('completed');
    loadFailsAbove = 4;
    await newRun('r7', 8);
    expect(await executeEvalRun(deps, 'r7')).toMatchObject({ status: 'failed', error: expect.stringMatching(/^loading the model failed: .*out of memory/) });
    await newRun('r8', 2);
    expect(await executeEvalRun(deps, 'r8')).toMatchObject({ status: 'completed', error: null });
    expect(sequences).toEqual([2, 8, 2]);
  });

  it('is cancelled while its model loads without waiting for the load; a resume waits for that load', async () => {
    loadDelayMs = 400;
    await newRun('r9');
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 20);
    const started = performance.now();
    const cancelled = await executeEvalRun(deps, 'r9', { signal: controller.signal });
    expect(cancelled).toMatchObject({ status: 'cancelled', error: null });
    expect(performance.now() - started).toBeLessThan(300);
    expect(deps.responses.count('r9')).toBe(0);
    const resumed = await executeEvalRun(deps, 'r9');
    expect(resumed).toMatchObject({ status: 'completed', error: null });
    expect(loads).toHaveLength(1);
    expect(disposed).toBe(0);
  });

  it('ends the run as failed on a device fault, restarts the worker at once, and a resume loads the model afresh', async () => {
    await newRun('r4');
    deviceFaultAt = [5]; // the first generate job (all five prompts)
    const failed = await executeEvalRun(deps, 'r4');
    expect(failed.status).toBe('failed');
    expect(failed.error).toMatch(
      /^generation failed: DEVICE_FAULT: CUDA backend: read tokens: an illegal memory access was encountered \(the model was unloaded; .*\); the runtime worker was restarted$/,
    );
    expect(deps.responses.count('r4')).toBe(0);
    expect(disposed).toBe(1);
    expect(deps.workers.spawned).toBe(2);
    expect(deps.client.state).toBe('ready');
    const resumed = await executeEvalRun(deps, 'r4');
    expect(resumed).toMatchObject({ status: 'completed', error: null });
    expect(loads).toHaveLength(2); // the fresh worker loaded the model again
    expect(deps.workers.spawned).toBe(2);
    expect(deps.responses.count('r4')).toBe(5);
  });

  it('takes a generate job with no token for stallMs as hung: restarts the worker, fails the run, and a resume completes', async () => {
    await newRun('r-hang');
    hangAt = [5];
    const failed = await executeEvalRun(deps, 'r-hang', { stallMs: 200 });
    expect(failed.status).toBe('failed');
    expect(failed.error).toMatch(/^generation stopped: no token for 0 s, so the runtime worker was taken as hung; the runtime worker was restarted \(resume the run to continue\)$/);
    expect(deps.workers.spawned).toBe(2);
    expect(deps.client.state).toBe('ready');
    hangAt = [];
    const resumed = await executeEvalRun(deps, 'r-hang', { stallMs: 200 });
    expect(resumed).toMatchObject({ status: 'completed', error: null });
    expect(deps.responses.count('r-hang')).toBe(5);
    expect(deps.workers.spawned).toBe(2);
  });

  it('keeps the worker and its model after a generation error that is not a device fault', async () => {
    await newRun('r5');
    plainErrorAt = [5];
    const failed = await executeEvalRun(deps, 'r5');
    expect(failed.status).toBe('failed');
    expect(failed.error).toBe('generation failed: INTERNAL: prompt 0 is empty');
    expect(disposed).toBe(0);
    const resumed = await executeEvalRun(deps, 'r5');
    expect(resumed.status).toBe('completed');
    expect(deps.workers.spawned).toBe(1);
    expect(loads).toHaveLength(1);
  });

  it("fails before loading, naming the prompts, when some are longer than the model's context", async () => {
    // Tiny byte-level tokenizer: the chat form of a prompt is 6 tokens plus its UTF-8 bytes.
    const lengths = records.slice(0, 5).map((r) => 6 + Buffer.byteLength(r.prompt, 'utf8'));
    const longest = Math.max(...lengths);
    const capped = path.join(dir, 'capped');
    await writeTinyTokenizer(capped);
    await writeFile(path.join(capped, 'config.json'), JSON.stringify({ model_type: 'olmoe', eos_token_id: EOS_ID, max_position_embeddings: longest - 1 }));
    await createEvalRun(deps, { runId: 'r-long', source: { ...source, modelDir: capped }, limit: 5, maxNewTokens: 8, appVersion: '0.1.0', datasetSha256: 'x' });
    const failed = await executeEvalRun(deps, 'r-long');
    const key = records[lengths.indexOf(longest)]!.key;
    expect(failed.status).toBe('failed');
    expect(failed.error).toBe(
      `a prompt is longer after the chat template than the model's context of ${longest - 1} tokens (max_position_embeddings ` +
        `in config.json), so the model cannot generate for it: key ${key} (${longest} tokens)`,
    );
    expect(loads).toEqual([]);
    expect(deps.responses.count('r-long')).toBe(0);
  });
});

type Emit = { token(jobId: string, itemId: string): void; item(jobId: string, item: GenerationItemResult): void };

/**
 * A RuntimeClient whose generate job is a script: it reports what it likes (items, tokens, nothing) and replies what it
 * likes. Loads answer on the CPU with `residency`.
 */
function scriptedRuntime(o: {
  generate: (job: { jobId: string; itemIds: string[] }, emit: Emit) => Promise<Result<GenerationBatchResult>>;
  restart?: (emit: Emit) => Promise<Result<void>>;
  encodeFails?: boolean;
  residency?: string;
}) {
  const tokenListeners = new Set<(e: TokenEvent) => void>();
  const itemListeners = new Set<(e: ItemEvent) => void>();
  const emit: Emit = {
    token: (jobId, itemId) => tokenListeners.forEach((h) => h({ event: 'token', jobId, itemId, tokenId: 65, count: 1 })),
    item: (jobId, item) => itemListeners.forEach((h) => h({ event: 'item', jobId, item })),
  };
  const fake = {
    restarts: 0,
    cancels: [] as string[],
    listeners: () => tokenListeners.size + itemListeners.size,
    state: 'ready' as const,
    generation: 1,
    onToken: (h: (e: TokenEvent) => void) => {
      tokenListeners.add(h);
      return () => tokenListeners.delete(h);
    },
    onItem: (h: (e: ItemEvent) => void) => {
      itemListeners.add(h);
      return () => itemListeners.delete(h);
    },
    restart: (): Promise<Result<void>> => {
      fake.restarts++;
      return o.restart ? o.restart(emit) : Promise.resolve(ok(undefined));
    },
    request: (async (req: WorkerRequest): Promise<Result<unknown>> => {
      switch (req.type) {
        case 'load':
          return ok({
            modelDir: req.modelDir, packedDir: req.packedDir, weights: req.weights, backend: 'cpu', deviceLabel: 'CPU',
            residency: o.residency ?? 'host', eosTokenIds: [EOS_ID], vocabSize: 257, maxContext: req.maxContext ?? 4096,
          });
        case 'encode-chat':
          return o.encodeFails ? err('INTERNAL', 'no template') : ok(req.prompts.map((p) => ({ text: p, tokenIds: [1, 2] })));
        case 'generate':
          return o.generate({ jobId: req.jobId, itemIds: req.items.map((i) => i.itemId) }, emit);
        case 'cancel':
          fake.cancels.push(req.jobId);
          return ok(true);
        default:
          return ok('');
      }
    }) as RuntimeClient['request'],
    // No load cache: every run's load reaches the script (the cache is WorkerClient's, tested there).
    ensureLoaded: ((req: WorkerRequest) => fake.request(req as never)) as RuntimeClient['ensureLoaded'],
    unload: async () => undefined,
  };
  return fake;
}

const itemOf = (itemId: string, text = 'short answer'): GenerationItemResult => ({
  itemId, tokenIds: [65, 66, 67], text, finishReason: 'stop', ttftMs: 5, decodeTokensPerSecond: 40,
});
const batchOf = (itemIds: readonly string[], wallMs = 10): GenerationBatchResult => ({
  items: itemIds.map((id) => itemOf(id)), wallMs, peakMemoryBytes: 0, peakMemoryScope: null, h2dBytes: 0,
});
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('eval-run job with a scripted runtime', () => {
  let dir: string;
  let records: PromptRecord[];
  let tools: TextTools;
  let source: ModelSource;
  let db: Database.Database;

  beforeAll(async () => {
    ({ dir, records, tools, source } = await fixture('horizon-evalrun-scripted-'));
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));
  beforeEach(() => {
    db = new Database(':memory:');
    migrate(db);
  });

  const depsWith = (runtime: RuntimeClient): EvalRunDeps => ({ runs: new RunRepo(db), responses: new ResponseRepo(db), runtime, records, tools });
  const newRun = (runtime: RuntimeClient, runId: string, limit = 5, batch = 2) =>
    createEvalRun(depsWith(runtime), { runId, source, limit, batch, maxNewTokens: 32, appVersion: '0.1.0', datasetSha256: 'x' });

  it('fails a run whose worker finished prompts without reporting them, keeping the one it reported', async () => {
    const rt = scriptedRuntime({
      generate: async ({ jobId, itemIds }, emit) => {
        emit.item(jobId, itemOf(itemIds[0]!));
        return ok(batchOf(itemIds));
      },
    });
    await newRun(rt, 'm-missing');
    const final = await executeEvalRun(depsWith(rt), 'm-missing');
    expect(final).toMatchObject({ status: 'failed', error: 'eval-run: the worker finished 4 prompts without reporting them' });
    expect(new ResponseRepo(db).count('m-missing')).toBe(1);
  });

  it('ends a cancel whose job the worker ended by crashing as cancelled, not failed', async () => {
    const controller = new AbortController();
    const rt = scriptedRuntime({
      generate: async ({ jobId, itemIds }, emit) => {
        emit.item(jobId, itemOf(itemIds[0]!));
        controller.abort();
        return err('WORKER_CRASHED', 'the runtime worker stopped unexpectedly (signal SIGKILL)');
      },
    });
    await newRun(rt, 'm-cancel-crash');
    const final = await executeEvalRun(depsWith(rt), 'm-cancel-crash', { signal: controller.signal });
    expect(final).toMatchObject({ status: 'cancelled', error: null });
    expect(rt.cancels).toHaveLength(1);
    expect(new ResponseRepo(db).count('m-cancel-crash')).toBe(1);
  });

  it('stores no timing the worker did not measure, and scores each mode with its own verdicts', async () => {
    const strictFails = 'Sure, here it is.\nAn answer without any commas';
    const rec = records.findIndex((r) => {
      const v = scorePrompt(r, strictFails, tools);
      return v.strict.some((x, i) => x !== v.loose[i]);
    });
    expect(rec).toBeGreaterThanOrEqual(0);
    const rt = scriptedRuntime({
      generate: async ({ jobId, itemIds }, emit) => {
        for (const id of itemIds) emit.item(jobId, { ...itemOf(id, strictFails), ttftMs: -1, decodeTokensPerSecond: 0 });
        return ok(batchOf(itemIds));
      },
    });
    await newRun(rt, 'm-items', records.length, 8);
    expect((await executeEvalRun(depsWith(rt), 'm-items')).status).toBe('completed');
    const stored = new ResponseRepo(db).all('m-items');
    for (const s of stored) expect(s).toMatchObject({ ttftMs: null, decodeTokensPerSecond: null });
    const v = scorePrompt(records[rec]!, strictFails, tools);
    const row = stored.find((s) => s.key === records[rec]!.key)!;
    expect(row.verdicts.map((x) => [x.strict, x.loose])).toEqual(v.strict.map((x, i) => [x, v.loose[i]]));
  });

  it("stores each response's time since the one before, and the job's wall time as the worker measured it in all", async () => {
    const rt = scriptedRuntime({
      generate: async ({ jobId, itemIds }, emit) => {
        for (const id of itemIds) {
          await sleep(30);
          emit.item(jobId, itemOf(id));
        }
        return ok(batchOf(itemIds, 1_000_000));
      },
    });
    await newRun(rt, 'm-wall', 3);
    const responses = new ResponseRepo(db);
    const seen: { wallMs: number; elapsed: number }[] = [];
    const started = performance.now();
    const final = await executeEvalRun(depsWith(rt), 'm-wall', {
      onResponse: () => seen.push({ wallMs: responses.figures('m-wall').wallMs, elapsed: performance.now() - started }),
    });
    expect(final.status).toBe('completed');
    expect(seen).toHaveLength(3);
    for (const s of seen) expect(s.wallMs).toBeLessThanOrEqual(s.elapsed);
    expect(responses.figures('m-wall')).toMatchObject({ batches: 1, wallMs: 1_000_000 });

    // A worker measuring less than main stored keeps main's measure rather than taking time back.
    const short = scriptedRuntime({
      generate: async ({ jobId, itemIds }, emit) => {
        for (const id of itemIds) {
          await sleep(20);
          emit.item(jobId, itemOf(id));
        }
        return ok(batchOf(itemIds, 0));
      },
    });
    await newRun(short, 'm-wall-short', 3);
    const last: number[] = [];
    await executeEvalRun(depsWith(short), 'm-wall-short', { onResponse: () => last.push(responses.figures('m-wall-short').wallMs) });
    expect(last.at(-1)).toBeGreaterThan(0);
    expect(responses.figures('m-wall-short')).toMatchObject({ batches: 1, wallMs: last.at(-1) });
  });

  it("adds main's measure of a job that ended without the worker's figures, and no figures for a job never started", async () => {
    const rt = scriptedRuntime({
      generate: async ({ jobId, itemIds }, emit) => {
        emit.item(jobId, itemOf(itemIds[0]!));
        await sleep(60);
        return err('INTERNAL', 'out of luck');
      },
    });
    await newRun(rt, 'm-err');
    const responses = new ResponseRepo(db);
    let atItem = -1;
    const failed = await executeEvalRun(depsWith(rt), 'm-err', { onResponse: () => (atItem = responses.figures('m-err').wallMs) });
    expect(failed).toMatchObject({ status: 'failed', error: 'generation failed: INTERNAL: out of luck' });
    expect(responses.figures('m-err').batches).toBe(1);
    expect(responses.figures('m-err').wallMs).toBeGreaterThanOrEqual(atItem + 50);

    const noEncode = scriptedRuntime({ encodeFails: true, generate: () => Promise.reject(new Error('not reached')) });
    await newRun(noEncode, 'm-encode');
    expect(await executeEvalRun(depsWith(noEncode), 'm-encode')).toMatchObject({
      status: 'failed', error: 'tokenizing prompts failed: INTERNAL: no template',
    });
    expect(responses.figures('m-encode')).toMatchObject({ batches: 0, wallMs: 0 });
  });

  it('leaves no listener on the runtime or the abort signal once it ends', async () => {
    const rt = scriptedRuntime({
      generate: async ({ jobId, itemIds }, emit) => {
        for (const id of itemIds) emit.item(jobId, itemOf(id));
        return ok(batchOf(itemIds));
      },
    });
    await newRun(rt, 'm-listeners');
    const controller = new AbortController();
    const added = vi.spyOn(controller.signal, 'addEventListener');
    const removed = vi.spyOn(controller.signal, 'removeEventListener');
    expect((await executeEvalRun(depsWith(rt), 'm-listeners', { signal: controller.signal })).status).toBe('completed');
    expect(rt.listeners()).toBe(0);
    expect(added.mock.calls.length).toBeGreaterThan(0);
    for (const [, fn] of added.mock.calls) expect(removed.mock.calls.some(([, f]) => f === fn)).toBe(true);
  });

  it('restarts a hung worker once, promptly, and stores nothing reported after the job ended', async () => {
    let crash: (() => void) | undefined;
    let job = '';
    const rt = scriptedRuntime({
      generate: ({ jobId }) => {
        job = jobId;
        return new Promise((resolve) => (crash = () => resolve(err('WORKER_CRASHED', 'killed'))));
      },
      restart: async (emit) => {
        crash?.();
        await sleep(80);
        emit.item(job, itemOf(String(records[0]!.key)));
        return ok(undefined);
      },
    });
    await newRun(rt, 'm-hang');
    const started = performance.now();
    const failed = await executeEvalRun(depsWith(rt), 'm-hang', { stallMs: 40 });
    expect(failed).toMatchObject({ status: 'failed', error: expect.stringMatching(/^generation stopped: no token for 0 s/) });
    expect(performance.now() - started).toBeLessThan(5_000);
    expect(rt.restarts).toBe(1);
    expect(new ResponseRepo(db).count('m-hang')).toBe(0);
  });

  it('does not take a worker sending tokens as hung', async () => {
    const rt = scriptedRuntime({
      generate: async ({ jobId, itemIds }, emit) => {
        // 400 ms of tokens 10 ms apart: longer than stallMs in all, far shorter between two (CI machines are loaded).
        for (let i = 0; i < 40; i++) {
          await sleep(10);
          emit.token(jobId, itemIds[0]!);
        }
        for (const id of itemIds) emit.item(jobId, itemOf(id));
        return ok(batchOf(itemIds));
      },
    });
    await newRun(rt, 'm-busy');
    expect(await executeEvalRun(depsWith(rt), 'm-busy', { stallMs: 200 })).toMatchObject({ status: 'completed', error: null });
    expect(rt.restarts).toBe(0);
  });

  it('records a change of residency alone on the same device', async () => {
    const rt = scriptedRuntime({
      residency: 'all on GPU',
      generate: async ({ jobId, itemIds }, emit) => {
        for (const id of itemIds) emit.item(jobId, itemOf(id));
        return ok(batchOf(itemIds));
      },
    });
    await newRun(rt, 'm-residency');
    new RunRepo(db).updateDevice('m-residency', 'cpu', 'CPU', 'host');
    expect(await executeEvalRun(depsWith(rt), 'm-residency')).toMatchObject({ status: 'completed', backend: 'cpu', residency: 'all on GPU' });
  });

  it('after a resume, counts the prompts left from all stored responses: none left at the end', async () => {
    let failAfter = 2;
    const rt = scriptedRuntime({
      generate: async ({ jobId, itemIds }, emit) => {
        for (const id of itemIds.slice(0, failAfter)) emit.item(jobId, itemOf(id));
        return failAfter < itemIds.length ? err('INTERNAL', 'stop here') : ok(batchOf(itemIds));
      },
    });
    await newRun(rt, 'm-eta', 5, 1);
    expect((await executeEvalRun(depsWith(rt), 'm-eta')).status).toBe('failed');
    failAfter = Infinity;
    const events: RunProgress[] = [];
    expect((await executeEvalRun(depsWith(rt), 'm-eta', { onProgress: (p) => events.push(p) })).status).toBe('completed');
    expect(events.at(-1)).toMatchObject({ status: 'completed', done: 5, etaSeconds: 0 });
  });
});

describe('estimateEtaSeconds', () => {
  it.each([
    ['nothing is left', { left: 0, finished: 0, wave: 8, generatingSeconds: null }, 0],
    ['generation has not started (the model loads)', { left: 10, finished: 0, wave: 8, generatingSeconds: null }, null],
    ['fewer than a wave have finished', { left: 533, finished: 7, wave: 8, generatingSeconds: 3 }, null],
    ['a wave has finished: seconds per prompt times those left', { left: 533, finished: 8, wave: 8, generatingSeconds: 4 }, 266.5],
    ['a wave of one (batch 1)', { left: 3, finished: 1, wave: 1, generatingSeconds: 2 }, 6],
    ['a wave of none (nothing to generate) still needs a finished prompt', { left: 3, finished: 0, wave: 0, generatingSeconds: 2 }, null],
  ])('%s', (_why, e, want) => {
    expect(estimateEtaSeconds(e)).toBe(want);
  });
});
