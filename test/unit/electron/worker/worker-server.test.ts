import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import type { DeviceProbe, WorkerMessage, WorkerRequest } from '../../../../electron/common/worker-protocol.js';
import type { InferenceEngine } from '../../../../electron/worker/runtime/inference-engine.js';
import { WorkerError, countLoadedAsFree, fromNative, serveWorker } from '../../../../electron/worker/worker-server.js';
import { createScriptedEngine } from './scripted-engine.js';
import { writeTinyTokenizer } from './tiny-tokenizer.js';

const GIB = 2 ** 30;
const gpu = (index: number, totalGib: number, freeGib: number) => ({
  index, name: `GPU ${index}`, vramBytes: totalGib * GIB, freeVramBytes: freeGib * GIB, driverVersion: '13.0', computeCapability: '8.9',
});
const probeOf = (...devices: ReturnType<typeof gpu>[]): DeviceProbe => ({ label: 'CUDA', cudaCompiled: true, devices, note: '', cpuIsa: 'avx2' });
const free = (p: DeviceProbe) => p.devices.map((d) => d.freeVramBytes / GIB);

/** A worker served over an in-memory port; returns a function that sends a request and waits for its answer. */
function servedWorker(engine: InferenceEngine): (request: WorkerRequest) => Promise<WorkerMessage> {
  let handler: (m: unknown) => void = () => {};
  const waiting = new Map<number, (m: WorkerMessage) => void>();
  serveWorker(
    {
      send: (m) => {
        if ('seq' in m) waiting.get(m.seq)?.(m);
      },
      onMessage: (h) => void (handler = h),
    },
    engine,
  );
  let seq = 0;
  return (request) =>
    new Promise<WorkerMessage>((resolve) => {
      waiting.set(++seq, resolve);
      handler({ seq, request });
    });
}

describe('fromNative', () => {
  const items = [{ itemId: 'ifeval-1000' }, { itemId: 'ifeval-1001' }];
  const nan = ': the logits for generated token 4 are not numbers (NaN): an activation overflowed FP16';
  // As the addon rejects: a status name as `code`, the failed prompt's position beside the message (promptIndex).
  const native = (message: string, code: string, promptIndex?: number) =>
    Object.assign(new Error(message), { code }, promptIndex === undefined ? {} : { promptIndex });
  it.each([
    [native(`generate: prompt 1${nan}`, 'numeric_fault', 1), 'INTERNAL', `generate: item ifeval-1001${nan}`],
    [
      native('generate: prompt 0 has 5000 tokens, more than the context limit 4096', 'invalid_prompt', 0),
      'BAD_INPUT',
      'generate: item ifeval-1000 has 5000 tokens, more than the context limit 4096',
    ],
    // A position the job does not have, or no position at all: the message as it was (never parsed for one).
    [native('generate: prompt 7 is empty', 'invalid_prompt', 7), 'BAD_INPUT', 'generate: prompt 7 is empty'],
    [native('generate: prompt 10 is empty', 'invalid_prompt'), 'BAD_INPUT', 'generate: prompt 10 is empty'],
    [native('loading failed: generate: prompt 0: x', 'model_invalid'), 'MODEL_INVALID', 'loading failed: generate: prompt 0: x'],
    [native('a message without the position', 'invalid_prompt', 1), 'BAD_INPUT', 'generate: item ifeval-1001: a message without the position'],
    // Every status has its code, whatever the message says.
    [native('CUDA backend: out of memory', 'device_fault'), 'DEVICE_FAULT', 'CUDA backend: out of memory'],
    [native('cannot allocate the 4096 MiB host copy', 'out_of_memory'), 'OUT_OF_MEMORY', 'cannot allocate the 4096 MiB host copy'],
    [native('this build has no CUDA backend', 'unsupported'), 'UNSUPPORTED', 'this build has no CUDA backend'],
    [native('pack cancelled', 'cancelled'), 'CANCELLED', 'pack cancelled'],
    [native('x.tmp: write failed', 'io_error'), 'INTERNAL', 'x.tmp: write failed'],
    [native('logits: no tokens', 'invalid_request'), 'BAD_INPUT', 'logits: no tokens'],
    [native('unknown native exception', 'internal'), 'INTERNAL', 'unknown native exception'],
  ])('%s', (error, code, message) => {
    const out = fromNative(error, items);
    expect(out).toBeInstanceOf(WorkerError);
    expect((out as WorkerError).code).toBe(code);
    expect((out as WorkerError).message).toBe(message);
  });
  it('passes worker errors, errors without a runtime status and non-errors through unchanged', () => {
    const w = new WorkerError('BAD_INPUT', 'generate: prompt 0: x');
    expect(fromNative(w, items)).toBe(w);
    const node = Object.assign(new Error('generate: prompt 0: x'), { code: 'ENOENT', promptIndex: 0 });
    expect(fromNative(node, items)).toBe(node);
    expect(fromNative('generate: prompt 0: x', items)).toBe('generate: prompt 0: x');
  });
});

describe('countLoadedAsFree', () => {
  it.each([
    ['no model is loaded', null, [10, 30]],
    ['the model on device 1 holds 6 GiB', { device: 1, bytes: 6 * GIB }, [10, 36]],
    ['never more than the device has', { device: 0, bytes: 20 * GIB }, [24, 30]],
    ['a device that is not probed', { device: 5, bytes: 6 * GIB }, [10, 30]],
  ])('%s', (_why, held, want) => {
    expect(free(countLoadedAsFree(probeOf(gpu(0, 24, 10), gpu(1, 40, 30)), held))).toEqual(want);
  });
});

describe('the worker answers a probe as a load would see the device', () => {
  let root: string;
  beforeAll(async () => {
    root = await mkdtemp(path.join(os.tmpdir(), 'horizon-ws-'));
    await writeTinyTokenizer(root);
  });
  afterAll(() => rm(root, { recursive: true, force: true }));

  it('counts its own loaded model as free, and the driver view once it is unloaded', async () => {
    const ask = servedWorker(createScriptedEngine({ devices: [gpu(0, 24, 20)], loadedDeviceBytes: 8 * GIB }));
    const probedFree = async () => {
      const r = await ask({ type: 'probe' });
      if (!('ok' in r) || !r.ok) throw new Error('probe failed');
      return free(r.value as DeviceProbe);
    };
    expect(await probedFree()).toEqual([20]);
    const loaded = await ask({ type: 'load', modelDir: root, packedDir: root, weights: 'int4', backend: 'cuda' });
    expect('ok' in loaded && loaded.ok).toBe(true);
    // The scripted driver now reports 12 GiB free; a load would replace the model and have 20.
    expect(await probedFree()).toEqual([20]);
    await ask({ type: 'unload' });
    expect(await probedFree()).toEqual([20]);
  });
});

describe('the worker loads one model at a time', () => {
  let root: string;
  beforeAll(async () => {
    root = await mkdtemp(path.join(os.tmpdir(), 'horizon-ws-load-'));
    await writeTinyTokenizer(root);
  });
  afterAll(() => rm(root, { recursive: true, force: true }));

  it('starts a second load only after the first has finished, and disposes the first model', async () => {
    const engine = createScriptedEngine();
    const log: string[] = [];
    let loading = 0;
    const ask = servedWorker({
      probe: engine.probe,
      load: async (req) => {
        log.push(`start ${req.maxSequences} with ${loading} loading`);
        loading++;
        await new Promise((resolve) => setTimeout(resolve, 30));
        const m = await engine.load(req);
        loading--;
        log.push(`done ${req.maxSequences}`);
        return { ...m, dispose: () => void log.push(`dispose ${req.maxSequences}`) };
      },
    });
    const load = (maxSequences: number) => ask({ type: 'load', modelDir: root, packedDir: root, weights: 'int4', backend: 'cpu', maxSequences });
    const answers = await Promise.all([load(1), load(2)]);
    expect(answers.map((a) => 'ok' in a && a.ok)).toEqual([true, true]);
    expect(log).toEqual(['start 1 with 0 loading', 'done 1', 'dispose 1', 'start 2 with 0 loading', 'done 2']);
  });
});

describe('the worker refuses what the runtime cannot run, naming it', () => {
  let root: string;
  beforeAll(async () => {
    root = await mkdtemp(path.join(os.tmpdir(), 'horizon-ws-ctx-'));
    await writeTinyTokenizer(root);
  });
  afterAll(() => rm(root, { recursive: true, force: true }));

  it('answers a generate holding a prompt longer than the loaded context with BAD_INPUT naming the item', async () => {
    const ask = servedWorker(createScriptedEngine());
    await ask({ type: 'load', modelDir: root, packedDir: null, weights: 'bf16', backend: 'cpu', maxContext: 16 });
    const policy = { decoding: 'greedy', maxNewTokens: 4, stopTokenIds: [256] } as const;
    const items = [{ itemId: 'short', tokenIds: [1, 2, 3] }, { itemId: 'key-42', tokenIds: new Array<number>(17).fill(65) }];
    expect(await ask({ type: 'generate', jobId: 'j', items, policy })).toMatchObject({
      ok: false,
      error: { code: 'BAD_INPUT', message: 'item key-42 has 17 prompt tokens, more than the 16 the model was loaded with' },
    });
    // Exactly at the limit is allowed: the prompt gets one token, then ends for length.
    const atLimit = await ask({ type: 'generate', jobId: 'j2', items: [{ itemId: 'k', tokenIds: new Array<number>(16).fill(65) }], policy });
    expect(atLimit).toMatchObject({ ok: true });
  });
});

describe('an unload sent while a load runs', () => {
  let root: string;
  beforeAll(async () => {
    root = await mkdtemp(path.join(os.tmpdir(), 'horizon-ws-unload-'));
    await writeTinyTokenizer(root);
  });
  afterAll(() => rm(root, { recursive: true, force: true }));

  it('unloads the model that load brings, instead of nothing', async () => {
    const engine = createScriptedEngine();
    let disposed = 0;
    const ask = servedWorker({
      probe: engine.probe,
      load: async (req) => {
        await new Promise((resolve) => setTimeout(resolve, 30));
        return { ...(await engine.load(req)), dispose: () => void disposed++ };
      },
    });
    const load = ask({ type: 'load', modelDir: root, packedDir: null, weights: 'bf16', backend: 'cpu' });
    const unload = ask({ type: 'unload' });
    expect(await load).toMatchObject({ ok: true });
    expect(await unload).toMatchObject({ ok: true });
    expect(disposed).toBe(1);
    expect(await ask({ type: 'encode-chat', prompts: ['a'] })).toMatchObject({ ok: false, error: { code: 'MODEL_NOT_FOUND' } });
  });
});

/** servedWorker, also keeping the events (token, item) the worker sends. */
function servedWorkerWithEvents(engine: InferenceEngine): { ask: (request: WorkerRequest) => Promise<WorkerMessage>; events: WorkerMessage[]; raw: (m: unknown) => Promise<WorkerMessage> } {
  let handler: (m: unknown) => void = () => {};
  const events: WorkerMessage[] = [];
  const waiting: ((m: WorkerMessage) => void)[] = [];
  const bySeq = new Map<number, (m: WorkerMessage) => void>();
  serveWorker(
    {
      send: (m) => {
        if ('seq' in m) (bySeq.get(m.seq) ?? waiting.shift())?.(m);
        else events.push(m);
      },
      onMessage: (h) => void (handler = h),
    },
    engine,
  );
  let seq = 0;
  return {
    events,
    ask: (request) =>
      new Promise<WorkerMessage>((resolve) => {
        bySeq.set(++seq, resolve);
        handler({ seq, request });
      }),
    raw: (m) =>
      new Promise<WorkerMessage>((resolve) => {
        waiting.push(resolve);
        handler(m);
      }),
  };
}

describe('the worker answers each request', () => {
  let root: string;
  const policy = { decoding: 'greedy', maxNewTokens: 64, stopTokenIds: [256] } as const;
  beforeAll(async () => {
    root = await mkdtemp(path.join(os.tmpdir(), 'horizon-ws-requests-'));
    await writeTinyTokenizer(root);
  });
  afterAll(() => rm(root, { recursive: true, force: true }));
  const load = { type: 'load', modelDir: '', packedDir: null, weights: 'bf16', backend: 'cpu' } as const;

  it('answers a message that is not a request with BAD_INPUT, under its seq when it has one', async () => {
    const { raw } = servedWorkerWithEvents(createScriptedEngine());
    expect(await raw({ seq: 7, request: { type: 'bogus' } })).toMatchObject({ seq: 7, ok: false, error: { code: 'BAD_INPUT' } });
    expect(await raw('garbage')).toMatchObject({ seq: -1, ok: false, error: { code: 'BAD_INPUT' } });
    expect(await raw({ seq: 1.5, request: { type: 'probe' } })).toMatchObject({ seq: -1, ok: false, error: { code: 'BAD_INPUT' } });
  });

  it('streams numbered tokens and each finished item, and answers with every item', async () => {
    const { ask, events } = servedWorkerWithEvents(createScriptedEngine({ reply: (ids) => (ids.length === 1 ? 'ab' : 'xyz') }));
    await ask({ ...load, modelDir: root });
    const items = [{ itemId: 'one', tokenIds: [1] }, { itemId: 'two', tokenIds: [1, 2] }];
    const answer = await ask({ type: 'generate', jobId: 'j', items, policy });
    expect(answer).toMatchObject({
      ok: true,
      value: {
        items: [
          { itemId: 'one', tokenIds: [97, 98], text: 'ab', finishReason: 'stop' },
          { itemId: 'two', tokenIds: [120, 121, 122], text: 'xyz', finishReason: 'stop' },
        ],
        peakMemoryBytes: 0,
        peakMemoryScope: null,
        h2dBytes: 0,
      },
    });
    const tokens = events.filter((e) => 'event' in e && e.event === 'token');
    expect(tokens.filter((e) => 'itemId' in e && e.itemId === 'two').map((e) => 'count' in e && e.count)).toEqual([1, 2, 3, 4]);
    const finished = events.filter((e) => 'event' in e && e.event === 'item');
    expect(finished).toEqual([
      expect.objectContaining({ jobId: 'j', item: expect.objectContaining({ itemId: 'one', text: 'ab', finishReason: 'stop' }) }),
      expect.objectContaining({ jobId: 'j', item: expect.objectContaining({ itemId: 'two', text: 'xyz', finishReason: 'stop' }) }),
    ]);
  });

  it('refuses a second job under a running job id, takes the id again once it ended, and cancels only a running job', async () => {
    const { ask, events } = servedWorkerWithEvents(createScriptedEngine({ tokenDelayMs: 20, reply: () => 'x'.repeat(60) }));
    await ask({ ...load, modelDir: root });
    const items = [{ itemId: 'k', tokenIds: [1] }];
    const first = ask({ type: 'generate', jobId: 'j', items, policy });
    expect(await ask({ type: 'generate', jobId: 'j', items, policy })).toMatchObject({
      ok: false,
      error: { code: 'BAD_INPUT', message: 'job j is already running' },
    });
    expect(await ask({ type: 'cancel', jobId: 'other' })).toMatchObject({ ok: true, value: false });
    expect(await ask({ type: 'cancel', jobId: 'j' })).toMatchObject({ ok: true, value: true });
    expect(await first).toMatchObject({ ok: true, value: { items: [{ itemId: 'k', finishReason: 'cancelled' }] } });
    // A cancelled prompt is not a finished item.
    expect(events.some((e) => 'event' in e && e.event === 'item')).toBe(false);
    expect(await ask({ type: 'cancel', jobId: 'j' })).toMatchObject({ ok: true, value: false });
    const again = await ask({ type: 'generate', jobId: 'j', items, policy: { ...policy, maxNewTokens: 2 } });
    expect(again).toMatchObject({ ok: true, value: { items: [{ itemId: 'k', text: 'xx', finishReason: 'length' }] } });
  });

  it('decodes a prefix without the character still incomplete, and a whole response with it', async () => {
    const { ask } = servedWorkerWithEvents(createScriptedEngine());
    await ask({ ...load, modelDir: root });
    const ids = [0x61, 0xc3]; // 'a' and the first byte of 'é'
    expect(await ask({ type: 'decode', tokenIds: ids, prefix: true })).toMatchObject({ ok: true, value: 'a' });
    expect(await ask({ type: 'decode', tokenIds: ids, prefix: false })).toMatchObject({ ok: true, value: 'a\uFFFD' });
  });

  it('refuses an engine answer that does not hold every prompt', async () => {
    const engine = createScriptedEngine();
    const { ask } = servedWorkerWithEvents({
      probe: engine.probe,
      load: async (req) => {
        const m = await engine.load(req);
        return { ...m, generate: async (...a) => ({ ...(await m.generate(...a)), items: [] }) };
      },
    });
    await ask({ ...load, modelDir: root });
    expect(await ask({ type: 'generate', jobId: 'j', items: [{ itemId: 'a', tokenIds: [1] }], policy })).toMatchObject({
      ok: false,
      error: { code: 'INTERNAL', message: 'engine returned 0 results for 1 prompts' },
    });
  });

  it('sends no finished item for a prompt that ended cancelled', async () => {
    const engine = createScriptedEngine();
    const { ask, events } = servedWorkerWithEvents({
      probe: engine.probe,
      load: async (req) => ({
        ...(await engine.load(req)),
        generate: (_prompts, _policy, onToken) => {
          const end = (finishReason: 'stop' | 'cancelled') => ({ tokenIds: [97], finishReason, ttftMs: 1, decodeTokensPerSecond: 0 });
          onToken(0, 97, end('stop'));
          onToken(1, 97, end('cancelled'));
          return Promise.resolve({ items: [end('stop'), end('cancelled')], peakMemoryBytes: 0, peakMemoryScope: null, h2dBytes: 0 });
        },
      }),
    });
    await ask({ ...load, modelDir: root });
    const items = [{ itemId: 'done', tokenIds: [1] }, { itemId: 'stopped', tokenIds: [1] }];
    expect(await ask({ type: 'generate', jobId: 'j', items, policy })).toMatchObject({ ok: true });
    expect(events.filter((e) => 'event' in e && e.event === 'item')).toEqual([
      expect.objectContaining({ item: expect.objectContaining({ itemId: 'done', text: 'a', finishReason: 'stop' }) }),
    ]);
    expect(events.filter((e) => 'event' in e && e.event === 'token')).toHaveLength(2);
  });

  it('names the item a runtime error is about, and unloads a model whose device faulted', async () => {
    const engine = createScriptedEngine();
    let fault = '';
    let disposed = 0;
    const { ask } = servedWorkerWithEvents({
      probe: engine.probe,
      load: async (req) => ({
        ...(await engine.load(req)),
        generate: () => Promise.reject(Object.assign(new Error('generate: prompt 1: the logits are not numbers'), { code: 'numeric_fault', promptIndex: 1 })),
        fault: () => fault,
        dispose: () => void disposed++,
      }),
    });
    await ask({ ...load, modelDir: root });
    const items = [{ itemId: 'a', tokenIds: [1] }, { itemId: 'b', tokenIds: [1] }];
    expect(await ask({ type: 'generate', jobId: 'j1', items, policy })).toMatchObject({
      ok: false,
      error: { code: 'INTERNAL', message: 'generate: item b: the logits are not numbers' },
    });
    expect(disposed).toBe(0);
    fault = 'CUDA error: an illegal memory access was encountered';
    expect(await ask({ type: 'generate', jobId: 'j2', items, policy })).toMatchObject({
      ok: false,
      error: { code: 'DEVICE_FAULT', message: `${fault} (the model was unloaded; the runtime worker must be restarted)` },
    });
    expect(disposed).toBe(1);
    expect(await ask({ type: 'encode-chat', prompts: ['a'] })).toMatchObject({ ok: false, error: { code: 'MODEL_NOT_FOUND' } });
  });
});
