import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

import Database from 'better-sqlite3';
import { ZipFile } from 'yazl';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import type { PromptRecord } from '../../../../../evals/ifeval/types.js';
import {
  aggregateConfig,
  campaignConfigs,
  onCpuBackend,
  parseBudgetList,
  type PerfRequestRecord,
} from '../../../../../electron/common/perf-campaign.js';
import type { Result } from '../../../../../electron/common/result.js';
import { migrate } from '../../../../../electron/main/db/open-database.js';
import { PerfRepo } from '../../../../../electron/main/db/perf-repo.js';
import { verifyPerfZip, writePerfZip } from '../../../../../electron/main/export/perf-zip.js';
import { readZipEntries } from '../../../../../electron/main/export/verify-result-zip.js';
import type { RuntimeClient } from '../../../../../electron/main/jobs/eval-run.js';
import type { ModelSource } from '../../../../../electron/main/jobs/model-source.js';
import { runPerfCampaign } from '../../../../../electron/main/jobs/perf-campaign.js';
import { writeTinyTokenizer } from '../../worker/tiny-tokenizer.js';

const rec = (over: Partial<PerfRequestRecord>): PerfRequestRecord => ({
  config: 0, block: 0, key: 1, promptTokens: 10, tokens: 128, ttftMs: 20, decodeTokensPerSecond: 100, responseMs: 1300,
  peakMemoryBytes: 0, h2dBytes: 0, expertHits: 0, expertMisses: 0, expertEvictions: 0, ...over,
});

describe('campaign aggregates', () => {
  it('pools the decode rate over every token after each first, over the time they took', () => {
    // 127 tokens at 100 tok/s (1.27 s) and 127 at 50 tok/s (2.54 s): 254 tokens in 3.81 s = 66.67 tok/s, not the mean 75.
    const a = aggregateConfig([rec({ decodeTokensPerSecond: 100 }), rec({ decodeTokensPerSecond: 50, key: 2 })], false);
    expect(a.decodeTokensPerSecond).toBeCloseTo(254 / 3.81, 10);
    expect(a.generatedTokens).toBe(256);
  });

  it.each([
    ['TTFT and response time medians', [rec({ ttftMs: 10, responseMs: 100 }), rec({ ttftMs: 30, responseMs: 300 }), rec({ ttftMs: 20, responseMs: 200 })], { ttftMsP50: 20, responseMsP50: 200, ttftMsP90: 28 }],
    ['the highest peak and summed copies and cache counts', [rec({ peakMemoryBytes: 5, h2dBytes: 3, expertHits: 10, expertMisses: 2, expertEvictions: 1 }), rec({ peakMemoryBytes: 9, h2dBytes: 4, expertHits: 5, expertMisses: 0, expertEvictions: 0 })], { peakMemoryBytes: 9, h2dBytes: 7, expertHits: 15, expertMisses: 2, expertEvictions: 1 }],
    ['no rate from single-token requests', [rec({ tokens: 1, decodeTokensPerSecond: 0 })], { decodeTokensPerSecond: null, ttftMsP50: 20 }],
    ['no TTFT from a request without a token', [rec({ tokens: 0, ttftMs: -1, decodeTokensPerSecond: 0 })], { ttftMsP50: null, decodeTokensPerSecond: null }],
    ['nothing at all from no requests', [], { requests: 0, decodeTokensPerSecond: null, ttftMsP50: null, responseMsP50: null, peakMemoryBytes: null }],
  ] as const)('%s', (_what, requests, expected) => {
    expect(aggregateConfig(requests, false)).toMatchObject(expected);
  });

  it('gives no device memory on the CPU', () => {
    expect(aggregateConfig([rec({ peakMemoryBytes: 5 })], true).peakMemoryBytes).toBeNull();
  });

  it.each([
    ['cpu', true],
    ['CPU', true], // a campaign ZIP written before the backend names were unified
    ['cuda', false],
    ['CUDA', false],
    ['pending', false],
  ])('reads backend %s from a campaign ZIP as on the CPU: %s', (backend, cpu) => {
    expect(onCpuBackend(backend)).toBe(cpu);
  });

  it('parses a budget list in GiB and names each configuration', () => {
    expect(parseBudgetList(' 4, 8,4 ,0.5')).toEqual([4 * 2 ** 30, 8 * 2 ** 30, 2 ** 29]);
    expect(() => parseBudgetList('4,lots')).toThrow("expert budget 'lots' must be a number of GiB from 0.25 to 1024");
    expect(() => parseBudgetList('0.1')).toThrow(/from 0.25/);
    expect(campaignConfigs([4 * 2 ** 30, 1.5 * 2 ** 30]).map((c) => c.label)).toEqual(['full residency', '4 GiB experts', '1.5 GiB experts']);
  });
});

/** A runtime worker standing in for the real one: loads, tokenizes and generates by rule, recording what it was asked. */
function fakeRuntime(opts: { failGenerateAt?: number; cuda?: boolean } = {}) {
  const asked: { type: string; [k: string]: unknown }[] = [];
  let generates = 0;
  const runtime = {
    generation: 1,
    state: 'ready',
    restart: async () => ({ ok: true, value: undefined }),
    onToken: () => () => undefined,
    onItem: () => () => undefined,
    request: async (req: { type: string; [k: string]: unknown }): Promise<Result<unknown>> => {
      asked.push(req);
      if (req.type === 'load') {
        const budget = req.expertBudgetBytes as number | undefined;
        return { ok: true, value: { backend: opts.cuda ? 'cuda' : 'cpu', deviceLabel: opts.cuda ? 'Fake GPU' : 'CPU', residency: budget ? `${budget} bytes of experts` : 'all experts', eosTokenIds: [0], vocabSize: 100, maxContext: 4096 } };
      }
      if (req.type === 'encode-chat') return { ok: true, value: (req.prompts as string[]).map((p) => ({ text: p, tokenIds: Array.from({ length: p.length % 7 + 3 }, (_, i) => i + 1) })) };
      if (req.type === 'generate') {
        generates += 1;
        if (generates === opts.failGenerateAt) return { ok: false, error: { code: 'DEVICE_FAULT', message: 'boom' } };
        const policy = req.policy as { maxNewTokens: number };
        const n = policy.maxNewTokens;
        return {
          ok: true,
          value: {
            items: [{ itemId: 'x', tokenIds: Array.from({ length: n }, () => 5), text: '', finishReason: 'length', ttftMs: 10 + generates, decodeTokensPerSecond: 200 }],
            wallMs: 10 + generates + n / 0.2, peakMemoryBytes: opts.cuda ? 1000 + generates : 0, peakMemoryScope: opts.cuda ? 'process' : null,
            h2dBytes: opts.cuda ? 64 : 0, expertCache: opts.cuda ? { hits: 10, misses: 1, evictions: 0 } : null,
          },
        };
      }
      return { ok: true, value: undefined };
    },
    ensureLoaded: (req: { type: string; [k: string]: unknown }) => runtime.request(req),
    unload: async () => undefined,
  };
  return { runtime: runtime as unknown as RuntimeClient, asked };
}

describe('runPerfCampaign and its ZIP', () => {
  let dir: string;
  let db: Database.Database;
  let perf: PerfRepo;
  let source: ModelSource;
  const records: PromptRecord[] = Array.from({ length: 5 }, (_, i) => ({ key: 1000 + i, prompt: `prompt number ${i}`, instruction_id_list: [], kwargs: [] }));
  const settings = { prompts: 3, blocks: 2, maxNewTokens: 16, warmupTokens: 4 };
  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'horizon-perf-'));
    await writeTinyTokenizer(path.join(dir, 'model'));
    source = { modelId: 'local:model/bf16', repo: 'local/model', revision: 'r', modelDir: path.join(dir, 'model'), packedDir: null, weights: 'bf16', manifestJson: '{}', manifestSha256: 'a'.repeat(64) };
    db = new Database(':memory:');
    migrate(db);
    perf = new PerfRepo(db);
  });
  afterAll(async () => {
    db.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('measures each prompt alone per block and configuration, after an excluded warm-up, with EOS suppressed', async () => {
    const { runtime, asked } = fakeRuntime({ cuda: true });
    const progress: number[] = [];
    const c = await runPerfCampaign({ perf, runtime, records }, { id: 'p1', source, budgetsBytes: [2 ** 30], backend: 'auto', settings }, { onProgress: (p) => progress.push(p.done) });
    expect(c.status).toBe('completed');
    expect(c.settings.keys).toEqual([1000, 1001, 1002]);
    expect(c.configs.map((x) => [x.label, x.expertBudgetBytes, x.residency])).toEqual([
      ['full residency', null, 'all experts'],
      ['1 GiB experts', 2 ** 30, `${2 ** 30} bytes of experts`],
    ]);
    const gens = asked.filter((r) => r.type === 'generate') as unknown as { items: unknown[]; policy: { maxNewTokens: number; stopTokenIds: number[]; batch: number } }[];
    // Per configuration: one warm-up of 4 tokens, then 2 blocks x 3 prompts of 16, one prompt a request.
    expect(gens.map((g) => g.policy.maxNewTokens)).toEqual([4, 16, 16, 16, 16, 16, 16, 4, 16, 16, 16, 16, 16, 16]);
    expect(gens.every((g) => g.items.length === 1 && g.policy.stopTokenIds.length === 0 && g.policy.batch === 1)).toBe(true);
    expect(asked.filter((r) => r.type === 'load').map((r) => r.expertBudgetBytes ?? null)).toEqual([null, 2 ** 30]);
    expect(c.requests).toHaveLength(12);
    expect(c.requests.map((r) => [r.config, r.block, r.key]).slice(0, 4)).toEqual([[0, 0, 1000], [0, 0, 1001], [0, 0, 1002], [0, 1, 1000]]);
    // The warm-up (generate #1, wall 10 + 1 + 20) is in no figure: the first measured request is generate #2.
    expect(c.requests[0]).toMatchObject({ ttftMs: 12, responseMs: 12 + 80, peakMemoryBytes: 1002, expertHits: 10, expertMisses: 1 });
    expect(c.aggregates[0]).toMatchObject({ requests: 6, generatedTokens: 96, decodeTokensPerSecond: 200, peakMemoryBytes: 1007, h2dBytes: 384, expertHits: 60, expertMisses: 6 });
    expect(c.peakMemoryScope).toBe('process');
    expect(progress.at(-1)).toBe(12);
  });

  it('keeps what it measured when a request fails, and says which', async () => {
    const { runtime } = fakeRuntime({ failGenerateAt: 3 });
    const c = await runPerfCampaign({ perf, runtime, records }, { id: 'p2', source, budgetsBytes: [], backend: 'cpu', settings });
    expect(c).toMatchObject({ status: 'failed', error: 'full residency, block 1, prompt 1001: DEVICE_FAULT: boom' });
    expect(c.requests.map((r) => r.key)).toEqual([1000]);
    expect(c.aggregates[0]?.peakMemoryBytes).toBeNull();
  });

  it('stops between requests when cancelled', async () => {
    const { runtime } = fakeRuntime();
    const controller = new AbortController();
    const c = await runPerfCampaign({ perf, runtime, records }, { id: 'p3', source, budgetsBytes: [], backend: 'cpu', settings }, {
      signal: controller.signal,
      onProgress: (p) => {
        if (p.done === 2) controller.abort();
      },
    });
    expect(c.status).toBe('cancelled');
    expect(c.requests).toHaveLength(2);
  });

  it('writes a ZIP the verifier accepts, and names what is wrong in a tampered one', async () => {
    const c = perf.get('p1')!;
    const good = path.join(dir, 'p1.zip');
    await writePerfZip(c, good, '9.9.9');
    const report = await verifyPerfZip(good);
    expect(report).toMatchObject({ verified: true, problems: [] });
    expect(report.aggregates).toEqual(c.aggregates);

    const entries = await readZipEntries(good);
    const rezip = async (edit: (e: Map<string, Buffer>) => void, rehash: boolean) => {
      const e = new Map(entries);
      edit(e);
      if (rehash) {
        const { createHash } = await import('node:crypto');
        const m = JSON.parse(e.get('manifest.json')!.toString()) as { files: { name: string; bytes: number; sha256: string }[] };
        for (const f of m.files) {
          const b = e.get(f.name)!;
          f.bytes = b.length;
          f.sha256 = createHash('sha256').update(b).digest('hex');
        }
        e.set('manifest.json', Buffer.from(JSON.stringify(m)));
      }
      const zip = new ZipFile();
      for (const [name, b] of e) zip.addBuffer(b, name);
      zip.end();
      const chunks: Buffer[] = [];
      for await (const chunk of zip.outputStream) chunks.push(chunk as Buffer);
      const out = path.join(dir, `bad-${Math.random().toString(36).slice(2)}.zip`);
      await writeFile(out, Buffer.concat(chunks));
      return (await verifyPerfZip(out)).problems;
    };
    const lines = () => entries.get('requests.jsonl')!.toString().split('\n').filter(Boolean);
    const setLines = (e: Map<string, Buffer>, l: string[]) => e.set('requests.jsonl', Buffer.from(`${l.join('\n')}\n`));
    // A faster first request, with the hashes left as they were, then with them updated.
    const faster = (e: Map<string, Buffer>) => setLines(e, lines().map((l, i) => (i === 0 ? l.replace('"decodeTokensPerSecond":200', '"decodeTokensPerSecond":400') : l)));
    expect(await rezip(faster, false)).toContainEqual(expect.stringMatching(/^requests\.jsonl: sha256 is [0-9a-f]{64}, manifest\.json says [0-9a-f]{64}$/));
    expect(await rezip(faster, true)).toContainEqual(expect.stringMatching(/^campaign\.json: full residency decodeTokensPerSecond is 200, the requests give 2\d\d\.\d+/));
    expect(await rezip((e) => setLines(e, lines().slice(1)), true)).toContainEqual(
      'requests.jsonl: 11 requests, but a completed campaign of 2 configurations measures 12',
    );
    expect(await rezip((e) => setLines(e, [...lines(), lines()[0]!]), true)).toContainEqual('requests.jsonl line 13: config 0, block 0, key 1000 measured twice');
    expect(await rezip((e) => setLines(e, lines().map((l, i) => (i === 0 ? l.replace('"key":1000', '"key":4242') : l))), true)).toContainEqual(
      "requests.jsonl line 1: key 4242 is not one of the campaign's prompts",
    );
    expect(await rezip((e) => setLines(e, lines().map((l, i) => (i === 0 ? l.replace('"tokens":16', '"tokens":-1') : l))), true)).toContainEqual(
      'requests.jsonl line 1: tokens must be a non-negative integer',
    );
    expect(await rezip((e) => e.set('extra.txt', Buffer.from('x')), false)).toContainEqual('extra.txt: in the ZIP but not listed in manifest.json');
    await expect(writePerfZip({ ...c, status: 'running' }, path.join(dir, 'live.zip'), '9.9.9')).rejects.toThrow('campaign p1 is still running');
    expect(JSON.parse(await readFile(path.join(dir, 'p1.zip')).then(async () => (await readZipEntries(good)).get('manifest.json')!.toString()))).toMatchObject({ format: 'horizon-perf-v1', campaignId: 'p1', appVersion: '9.9.9' });
  });
});
