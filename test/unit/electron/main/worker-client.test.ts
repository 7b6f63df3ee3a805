import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';

import type { ItemEvent, TokenEvent } from '../../../../electron/common/worker-protocol.js';
import { WorkerClient, forkSpawner } from '../../../../electron/main/worker-client.js';
import { EOS_ID, writeTinyTokenizer } from '../worker/tiny-tokenizer.js';

const entry = path.join(path.dirname(fileURLToPath(import.meta.url)), 'scripted-worker-entry.ts');
const policy = { decoding: 'greedy', maxNewTokens: 64, stopTokenIds: [EOS_ID] } as const;

describe('WorkerClient over a forked worker', () => {
  let root: string;
  let modelDir: string;
  let crashDir: string;
  const clients: WorkerClient[] = [];
  const client = (delayMs = 0) => {
    const c = new WorkerClient(forkSpawner(entry, { ...process.env, SCRIPTED_TOKEN_DELAY_MS: String(delayMs) }));
    clients.push(c);
    return c;
  };

  beforeAll(async () => {
    root = await mkdtemp(path.join(os.tmpdir(), 'horizon-wc-'));
    modelDir = path.join(root, 'model');
    crashDir = path.join(root, 'crash-on-generate');
    await writeTinyTokenizer(modelDir);
    await writeTinyTokenizer(crashDir);
  });
  afterEach(() => {
    for (const c of clients.splice(0)) c.dispose();
  });
  afterAll(() => rm(root, { recursive: true, force: true }));

  it('loads a model once per worker process and asks again only for something else, more room, or a new process', async () => {
    const c = client();
    const loads = vi.spyOn(c, 'request');
    const req = { type: 'load', modelDir, packedDir: '/p', weights: 'int4', backend: 'auto', maxSequences: 4 } as const;
    const count = () => loads.mock.calls.filter(([r]) => r.type === 'load').length;
    // Two at once: the second waits for the first's load.
    const [a, b] = await Promise.all([c.ensureLoaded(req), c.ensureLoaded(req)]);
    expect(a.ok && b.ok).toBe(true);
    expect(count()).toBe(1);
    await c.ensureLoaded({ ...req, maxSequences: 2 });
    expect(count()).toBe(1);
    await c.ensureLoaded({ ...req, maxSequences: 8 });
    expect(count()).toBe(2);
    await c.ensureLoaded({ ...req, maxSequences: 8, expertBudgetBytes: 2 ** 30 });
    expect(count()).toBe(3);
    await c.restart();
    await c.ensureLoaded({ ...req, maxSequences: 8, expertBudgetBytes: 2 ** 30 });
    expect(count()).toBe(4);
    await c.unload();
    await c.ensureLoaded({ ...req, maxSequences: 8, expertBudgetBytes: 2 ** 30 });
    expect(count()).toBe(5);
  });

  it('probes, loads, encodes and generates with streamed tokens', async () => {
    const c = client();
    const probe = await c.request({ type: 'probe' });
    expect(probe).toEqual({ ok: true, value: { label: 'CPU', cudaCompiled: false, devices: [], note: 'scripted engine', cpuIsa: 'avx2' } });
    const loaded = await c.request({ type: 'load', modelDir, packedDir: '/p', weights: 'int4', backend: 'auto' });
    expect(loaded.ok && loaded.value.eosTokenIds).toEqual([EOS_ID]);
    const enc = await c.request({ type: 'encode-chat', prompts: ['Hi', 'Hello'] });
    if (!enc.ok) throw new Error(enc.error.message);
    expect(enc.value.map((e) => e.tokenIds.length)).toEqual([8, 11]);
    const tokens: TokenEvent[] = [];
    const items: ItemEvent[] = [];
    const order: string[] = [];
    c.onToken((e) => tokens.push(e));
    c.onItem((e) => {
      items.push(e);
      order.push(`item ${e.item.itemId}`);
    });
    const gen = await c.request({
      type: 'generate',
      jobId: 'job-1',
      items: enc.value.map((e, i) => ({ itemId: `p${i}`, tokenIds: e.tokenIds })),
      policy: { ...policy, batch: 1 },
    });
    order.push('reply');
    if (!gen.ok) throw new Error(gen.error.message);
    expect(gen.value.items.map((i) => [i.itemId, i.text, i.finishReason])).toEqual([
      ['p0', 'echo 8', 'stop'],
      ['p1', 'echo 11', 'stop'],
    ]);
    // The stop token is streamed too, as the native runtime streams it; results exclude it.
    expect(tokens.filter((t) => t.itemId === 'p1').map((t) => t.tokenId)).toEqual([...Buffer.from('echo 11'), EOS_ID]);
    expect(tokens.every((t) => t.jobId === 'job-1')).toBe(true);
    // One at a time: p1's first token comes after p0 ended; each finished item is reported before the reply.
    const p0Last = tokens.findLastIndex((t) => t.itemId === 'p0');
    expect(tokens.findIndex((t) => t.itemId === 'p1')).toBe(p0Last + 1);
    expect(order).toEqual(['item p0', 'item p1', 'reply']);
    expect(items.map((e) => e.item)).toEqual(gen.value.items);
  });

  it('stops at max new tokens with finish reason "length"', async () => {
    const c = client();
    await c.request({ type: 'load', modelDir, packedDir: '/p', weights: 'int4', backend: 'cpu' });
    const gen = await c.request({
      type: 'generate',
      jobId: 'j',
      items: [{ itemId: 'a', tokenIds: [1, 2, 3] }],
      policy: { ...policy, maxNewTokens: 3 },
    });
    expect(gen.ok && gen.value.items[0]).toMatchObject({ text: 'ech', finishReason: 'length', tokenIds: [101, 99, 104] });
  });

  it('answers a malformed request with BAD_INPUT and generate before load with MODEL_NOT_FOUND', async () => {
    const c = client();
    const bad = await c.request({ type: 'generate', jobId: 'j', items: [], policy });
    expect(bad).toMatchObject({ ok: false, error: { code: 'BAD_INPUT', message: /items must be a non-empty array/ } });
    const early = await c.request({ type: 'encode-chat', prompts: ['x'] });
    expect(early).toMatchObject({ ok: false, error: { code: 'MODEL_NOT_FOUND' } });
  });

  it('cancels a running job by id', async () => {
    const c = client(20);
    await c.request({ type: 'load', modelDir, packedDir: '/p', weights: 'int4', backend: 'cpu' });
    const gen = c.request({ type: 'generate', jobId: 'slow', items: [{ itemId: 'a', tokenIds: [1] }], policy });
    await new Promise<void>((resolve) => c.onToken(() => resolve()));
    expect(await c.request({ type: 'cancel', jobId: 'slow' })).toEqual({ ok: true, value: true });
    const done = await gen;
    expect(done.ok && done.value.items[0]?.finishReason).toBe('cancelled');
    expect(await c.request({ type: 'cancel', jobId: 'slow' })).toEqual({ ok: true, value: false });
  });

  it('fails in-flight requests with WORKER_CRASHED naming the signal, and restarts', async () => {
    const c = client();
    const crashes: string[] = [];
    c.onCrash((r) => crashes.push(r));
    await c.request({ type: 'load', modelDir: crashDir, packedDir: '/p', weights: 'int4', backend: 'cpu' });
    const firstPid = c.workerPid;
    const gen = await c.request({ type: 'generate', jobId: 'j', items: [{ itemId: 'a', tokenIds: [1] }], policy });
    expect(gen).toMatchObject({ ok: false, error: { code: 'WORKER_CRASHED', message: /signal SIGKILL.*'generate'/ } });
    expect(crashes).toEqual(['the runtime worker stopped unexpectedly (signal SIGKILL)']);
    expect(c.state).toBe('crashed');
    expect(await c.request({ type: 'probe' })).toMatchObject({ ok: false, error: { code: 'WORKER_CRASHED' } });
    expect((await c.restart()).ok).toBe(true);
    expect(c.workerPid).not.toBe(firstPid);
    expect((await c.request({ type: 'probe' })).ok).toBe(true);
  });

  it('sends to a worker that has just died without ending this process (EPIPE / closed channel)', async () => {
    const exits = path.join(root, 'exits.mjs');
    await writeFile(exits, 'process.exit(3);\n');
    const channel = forkSpawner(exits)();
    const exited = new Promise<number | null>((resolve) => channel.onExit((code) => resolve(code)));
    expect(await exited).toBe(3);
    const errors: unknown[] = [];
    const onUncaught = (e: unknown): void => void errors.push(e);
    process.on('uncaughtException', onUncaught);
    try {
      channel.send({ seq: 1, request: { type: 'probe' } });
      await new Promise((resolve) => setTimeout(resolve, 50));
    } finally {
      process.off('uncaughtException', onUncaught);
    }
    expect(errors).toEqual([]);
  });
});

describe('utilityProcessSpawner', () => {
  it('drives an Electron-style utility process: postMessage in, message events out, exit code on death', async () => {
    const { EventEmitter } = await import('node:events');
    const { serveWorker } = await import('../../../../electron/worker/worker-server.js');
    const { createScriptedEngine } = await import('../worker/scripted-engine.js');
    const { utilityProcessSpawner } = await import('../../../../electron/main/worker-client.js');
    const forks: { modulePath: string; serviceName?: string }[] = [];
    let child: InstanceType<typeof EventEmitter> & { postMessage(m: unknown): void; kill(): boolean };
    const utilityProcess = {
      fork(modulePath: string, _args?: string[], options?: { serviceName?: string }) {
        forks.push({ modulePath, ...(options?.serviceName ? { serviceName: options.serviceName } : {}) });
        const toWorker = new EventEmitter();
        child = Object.assign(new EventEmitter(), {
          postMessage: (m: unknown) => setImmediate(() => toWorker.emit('message', structuredClone(m))),
          kill: () => {
            setImmediate(() => child.emit('exit', 9));
            return true;
          },
        });
        serveWorker({ send: (m) => setImmediate(() => child.emit('message', m)), onMessage: (h) => toWorker.on('message', h) }, createScriptedEngine());
        return child;
      },
    };
    const c = new WorkerClient(utilityProcessSpawner(utilityProcess, '/app/out/electron/worker/index.js'));
    expect(await c.request({ type: 'probe' })).toMatchObject({ ok: true, value: { label: 'CPU' } });
    expect(forks).toEqual([{ modulePath: '/app/out/electron/worker/index.js', serviceName: 'Horizon runtime' }]);
    const crashed = new Promise<string>((resolve) => c.onCrash(resolve));
    child!.kill();
    expect(await crashed).toBe('the runtime worker stopped unexpectedly (exit code 9)');
    c.dispose();
  });
});

describe('WorkerClient stopped while its worker starts', () => {
  /** Channels whose worker says ready after `readyMs` and exits once killed; `spawned` counts them. */
  const slowWorkers = (readyMs: number) => {
    const spawner = () => {
      const id = ++spawner.spawned;
      const onMessage: ((m: unknown) => void)[] = [];
      const onExit: ((code: number | null, signal: string | null) => void)[] = [];
      let alive = true;
      setTimeout(() => alive && onMessage.forEach((h) => h({ event: 'ready', pid: 1000 + id })), readyMs);
      return {
        send: () => undefined,
        onMessage: (h: (m: unknown) => void) => void onMessage.push(h),
        onExit: (h: (code: number | null, signal: string | null) => void) => void onExit.push(h),
        kill: () => {
          alive = false;
          setTimeout(() => onExit.forEach((h) => h(null, 'SIGTERM')), 1);
        },
      };
    };
    spawner.spawned = 0;
    return spawner;
  };

  it('restart(): the first start ends as stopped and a fresh worker becomes ready', async () => {
    const spawner = slowWorkers(30);
    const c = new WorkerClient(spawner, { startTimeoutMs: 5_000 });
    const first = c.start();
    const restarted = c.restart();
    expect(await first).toMatchObject({ ok: false, error: { code: 'WORKER_CRASHED', message: /stopped while starting \(restarted by the client\)/ } });
    expect(await restarted).toEqual({ ok: true, value: undefined });
    expect([c.state, c.workerPid, spawner.spawned]).toEqual(['ready', 1002, 2]);
    c.dispose();
  });

  it('dispose(): the start ends at once', async () => {
    const c = new WorkerClient(slowWorkers(30), { startTimeoutMs: 5_000 });
    const first = c.start();
    c.dispose();
    expect(await first).toMatchObject({ ok: false, error: { message: /stopped while starting \(client disposed\)/ } });
    expect(c.state).toBe('disposed');
  });
});

describe('WorkerClient given a malformed reply', () => {
  it('fails the request the reply names instead of leaving it pending, and logs the problem', async () => {
    const toMain: ((m: unknown) => void)[] = [];
    const c = new WorkerClient(() => {
      setTimeout(() => toMain.forEach((h) => h({ event: 'ready', pid: 7 })), 0);
      return {
        send: (m) => setTimeout(() => toMain.forEach((h) => h({ seq: m.seq, ok: 'yes', value: null })), 0),
        onMessage: (h) => void toMain.push(h),
        onExit: () => undefined,
        kill: () => undefined,
      };
    });
    const logs: string[] = [];
    c.onLog((e) => logs.push(e.message));
    const answer = await Promise.race([c.request({ type: 'probe' }), new Promise((resolve) => setTimeout(() => resolve('still pending'), 500))]);
    expect(answer).toEqual({
      ok: false,
      error: { code: 'INTERNAL', message: "the runtime worker answered 'probe' with an invalid message: worker response 1 must carry ok:true+value or ok:false+error" },
    });
    expect(logs).toEqual(['runtime worker sent an invalid message: worker response 1 must carry ok:true+value or ok:false+error']);
    c.dispose();
  });
});
