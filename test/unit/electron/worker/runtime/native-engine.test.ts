import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import type { TokenEvent, WorkerMessage, WorkerRequest } from '../../../../../electron/common/worker-protocol.js';
import { WorkerClient, forkSpawner } from '../../../../../electron/main/worker-client.js';
import { loadModel } from '../../../../../electron/worker/runtime/binding.js';
import { createNativeEngine, pickBackend, residencyLabel } from '../../../../../electron/worker/runtime/native-engine.js';
import { serveWorker } from '../../../../../electron/worker/worker-server.js';
import { packModel } from '../../../../../electron/worker/runtime/pack.js';
import { makeTinyModel } from '../../../../../scripts/make-tiny-model.js';
import { addonHasRuntime } from '../../../native-addon.js';

describe.skipIf(!addonHasRuntime())(
  'runtime worker over the native addon (skipped: addon not built with loadModel; run npm run build:native)',
  () => {
    let root: string;
    let src: string;
    let packed: string;
    let eos: number;
    const worker = new WorkerClient(forkSpawner());

    beforeAll(async () => {
      root = await mkdtemp(path.join(os.tmpdir(), 'horizon-native-worker-'));
      src = path.join(root, 'src');
      packed = path.join(root, 'int4-g32');
      eos = (await makeTinyModel(src, { seed: 3 })).eosTokenId;
      await packModel({ src, dst: packed });
    });
    afterAll(async () => {
      worker.dispose();
      await rm(root, { recursive: true, force: true });
    });

    it('labels the device CPU exactly when no CUDA device is usable', async () => {
      const probe = await worker.request({ type: 'probe' });
      if (!probe.ok) throw new Error(probe.error.message);
      expect(probe.value.label === 'CPU').toBe(probe.value.devices.length === 0);
      if (probe.value.devices.length === 0) expect(probe.value.note).not.toBe('');
      // The kernel path a load on this host takes (the residency label names it the same way, upper case).
      expect(['scalar', 'avx2', 'avx-vnni', 'avx512-vnni']).toContain(probe.value.cpuIsa);
    });

    it('generates in the worker exactly what the addon generates in-process (greedy, stop token stripped)', async () => {
      const loaded = await worker.request({ type: 'load', modelDir: src, packedDir: packed, weights: 'int4', backend: 'cpu', maxContext: 96 });
      if (!loaded.ok) throw new Error(loaded.error.message);
      expect(loaded.value).toMatchObject({ backend: 'cpu', deviceLabel: 'CPU', weights: 'int4', maxContext: 96 });
      expect(loaded.value.eosTokenIds).toContain(eos);
      const enc = await worker.request({ type: 'encode-chat', prompts: ['Write a haiku.', 'List three colors, no commas.'] });
      if (!enc.ok) throw new Error(enc.error.message);
      expect(enc.value[0]?.text).toBe('<|endoftext|><|user|>\nWrite a haiku.\n<|assistant|>\n');
      const streamed = new Map<string, number[]>();
      worker.onToken((e: TokenEvent) => streamed.set(e.itemId, [...(streamed.get(e.itemId) ?? []), e.tokenId]));
      const policy = { decoding: 'greedy', maxNewTokens: 12, stopTokenIds: loaded.value.eosTokenIds } as const;
      const gen = await worker.request({
        type: 'generate',
        jobId: 'native-1',
        items: enc.value.map((e, i) => ({ itemId: `p${i}`, tokenIds: e.tokenIds })),
        policy,
      });
      if (!gen.ok) throw new Error(gen.error.message);

      const model = await loadModel({ dir: packed, weights: 'int4', backend: 'cpu' });
      try {
        const direct = await model.generate({ prompts: enc.value.map((e) => e.tokenIds), maxNewTokens: 12, stopTokens: policy.stopTokenIds });
        direct.results.forEach((r, i) => {
          const item = gen.value.items[i]!;
          const expected = r.finishReason === 'stop' ? r.tokens.slice(0, -1) : r.tokens;
          expect(expected.length).toBeGreaterThan(0);
          expect(item.tokenIds).toEqual(expected);
          expect(item.finishReason).toBe(r.finishReason);
          expect(streamed.get(`p${i}`)?.slice(0, expected.length)).toEqual(expected);
        });
      } finally {
        model.close();
      }
      expect(gen.value.peakMemoryBytes).toBe(0);
      expect(gen.value.peakMemoryScope).toBeNull();
    });

    it("reports a job's own error when an unload disposes its model while it runs, and disposes once", async () => {
      let handler: (m: unknown) => void = () => {};
      const replies = new Map<number, (m: WorkerMessage) => void>();
      serveWorker({ send: (m) => void ('seq' in m && replies.get(m.seq)?.(m)), onMessage: (h) => void (handler = h) }, createNativeEngine());
      let seq = 0;
      const ask = (request: WorkerRequest) =>
        new Promise<WorkerMessage>((resolve) => {
          replies.set(++seq, resolve);
          handler({ seq, request });
        });
      expect(await ask({ type: 'load', modelDir: src, packedDir: null, weights: 'bf16', backend: 'cpu', maxContext: 64 })).toMatchObject({ ok: true });
      const policy = { decoding: 'greedy', maxNewTokens: 4, stopTokenIds: [eos] } as const;
      const job = ask({ type: 'generate', jobId: 'j', items: [{ itemId: 'x', tokenIds: [1, 99999] }], policy });
      expect(await ask({ type: 'unload' })).toMatchObject({ ok: true });
      expect(await job).toMatchObject({ ok: false, error: { code: 'BAD_INPUT', message: expect.stringMatching(/token id 99999 is outside the vocabulary/) } });
      expect(await ask({ type: 'unload' })).toMatchObject({ ok: true });

      const model = await createNativeEngine().load({ modelDir: src, packedDir: null, weights: 'bf16', backend: 'cpu', maxContext: 64 });
      model.dispose();
      model.dispose();
      expect(model.fault()).toBe('');
      expect(model.deviceMemory()).toBeNull();
    });
  },
);

describe('residencyLabel', () => {
  const base = { weights: 'int4', numExperts: 64, threads: 2, simd: true, cpuIsa: 'avx2' } as const;
  it.each([
    [{ ...base, backend: 'cpu', deviceExpertSlots: 0 }, 'host memory, 2 threads, AVX2'],
    [{ ...base, backend: 'cpu', deviceExpertSlots: 0, cpuIsa: 'avx512-vnni' }, 'host memory, 2 threads, AVX512-VNNI'],
    [{ ...base, backend: 'cpu', deviceExpertSlots: 0, simd: false, cpuIsa: 'scalar' }, 'host memory, 2 threads'],
    [{ ...base, backend: 'cuda', deviceExpertSlots: 64 }, 'all 64 int4 experts of every layer resident on the GPU'],
    [
      { ...base, backend: 'cuda', deviceExpertSlots: 12 },
      '12 of 64 int4 experts per layer cached on the GPU, the rest copied from pinned host memory on demand',
    ],
  ] as const)('%j', (info, label) => {
    expect(residencyLabel(info)).toBe(label);
  });
});

describe('pickBackend', () => {
  const gpu = (index: number, name: string) => ({
    index, name, vramBytes: 24 * 2 ** 30, freeVramBytes: 20 * 2 ** 30, driverVersion: '13.0', computeCapability: '8.9',
  });
  const none = { label: 'CPU', cudaCompiled: true, devices: [], note: 'no CUDA device found', cpuIsa: 'avx2' };
  const two = { label: 'CUDA: RTX A', cudaCompiled: true, devices: [gpu(0, 'RTX A'), gpu(1, 'RTX B')], note: '', cpuIsa: 'avx2' };
  it.each([
    ['auto', none, undefined, { kind: 'cpu' }],
    ['cpu', two, 1, { kind: 'cpu' }],
    ['auto', two, undefined, { kind: 'cuda', device: gpu(0, 'RTX A') }],
    ['cuda', two, undefined, { kind: 'cuda', device: gpu(0, 'RTX A') }],
    ['auto', two, 1, { kind: 'cuda', device: gpu(1, 'RTX B') }],
    ['cuda', two, 1, { kind: 'cuda', device: gpu(1, 'RTX B') }],
  ] as const)('%s with %j devices, device %j', (choice, probe, device, picked) => {
    expect(pickBackend(choice, probe, device)).toEqual(picked);
  });

  it('names the devices found when the one asked for is missing', () => {
    expect(() => pickBackend('cuda', two, 2)).toThrow('CUDA device 2 was asked for but is not among the devices found (0: RTX A, 1: RTX B)');
  });

  it('says why when CUDA is asked for but not usable', () => {
    expect(() => pickBackend('cuda', none, 0)).toThrow('the CUDA backend was asked for but is not usable: no CUDA device found');
    // A device index is a request for that GPU, also under 'auto': never a silent fall back to the CPU.
    expect(() => pickBackend('auto', none, 1)).toThrow('the CUDA backend was asked for but is not usable: no CUDA device found');
  });
});
