/** The native engine's own logic over a stand-in addon: what it asks the runtime for and how it reports the answers. */
import { afterEach, describe, expect, it, vi } from 'vitest';

import type { GenerateOutput, GenerateRequest, LoadModelOptions, NativeDeviceProbe, NativeModelInfo, TokenCallback } from '../../../../../electron/worker/runtime/binding.js';
import { createNativeEngine, probeNativeDevices } from '../../../../../electron/worker/runtime/native-engine.js';

const addon = vi.hoisted(() => ({
  probe: { cudaCompiled: false, error: '', devices: [], cpuIsa: 'avx2' } as NativeDeviceProbe,
  loads: [] as LoadModelOptions[],
  model: null as null | ReturnType<typeof fakeModel>,
}));

vi.mock('../../../../../electron/worker/runtime/binding.js', () => ({
  loadNativeBinding: () => ({ probeDevices: () => addon.probe }),
  loadModel: (options: LoadModelOptions) => {
    addon.loads.push(options);
    addon.model = fakeModel(options);
    return Promise.resolve(addon.model);
  },
}));

const GIB = 2 ** 30;

function fakeModel(options: LoadModelOptions) {
  const state = { closed: 0, fault: '', deviceBytes: 5 * GIB, requests: [] as GenerateRequest[], output: null as GenerateOutput | null, ends: [] as Parameters<TokenCallback>[] };
  const info = (): NativeModelInfo => {
    if (state.closed) throw new Error('the model is closed');
    return {
      backend: options.backend, weights: options.weights, dir: options.dir, groupSize: 0, hiddenSize: 8, intermediateSize: 8, numLayers: 1,
      numHeads: 1, numKvHeads: 1, headDim: 8, numExperts: 4, expertsPerToken: 2, vocabSize: 300, maxContext: 512, eosTokenIds: [2],
      weightBytes: 1, threads: 3, simd: false, cpuIsa: 'scalar', deviceExpertSlots: options.backend === 'cuda' ? 4 : 0, fault: state.fault,
      device: options.device ?? (options.backend === 'cuda' ? 0 : -1), deviceBytes: state.deviceBytes,
    };
  };
  return {
    state,
    info,
    logits: () => Promise.resolve([]),
    generate(request: GenerateRequest, onToken?: TokenCallback) {
      state.requests.push(request);
      for (const e of state.ends) onToken?.(...e);
      return Promise.resolve(state.output!);
    },
    close: () => void state.closed++,
  };
}

const cudaDevice = (index: number, name: string, driverVersion = 12040) => ({
  index, name, totalMemoryBytes: 24 * GIB, freeMemoryBytes: 20 * GIB, computeCapability: '8.9', driverVersion,
});
const stats = (over: Partial<GenerateOutput['stats']> = {}): GenerateOutput['stats'] => ({
  prefillMs: 1, decodeMs: 1, prefillSteps: 1, decodeSteps: 1, expertHits: 0, expertMisses: 0, h2dBytes: 7, d2hBytes: 0,
  peakMemoryBytes: 3 * GIB, peakMemoryScope: 'process', ...over,
});
const result = (tokens: number[], finishReason: 'stop' | 'length' | 'cancelled') => ({
  tokens, promptTokens: 2, ttftMs: 12.5, decodeTokensPerSecond: 40, finishReason,
});
const policy = { decoding: 'greedy', maxNewTokens: 8, stopTokenIds: [2] } as const;

afterEach(() => {
  addon.probe = { cudaCompiled: false, error: '', devices: [], cpuIsa: 'avx2' };
  addon.loads = [];
  addon.model = null;
});

describe('probeNativeDevices', () => {
  it("reports the devices, the driver version as CUDA writes it, and the first device's name", () => {
    addon.probe = { cudaCompiled: true, error: '', cpuIsa: 'avx2', devices: [cudaDevice(0, 'RTX A', 12040), cudaDevice(1, 'RTX B', 0)] };
    expect(probeNativeDevices()).toEqual({
      label: 'CUDA: RTX A',
      cudaCompiled: true,
      devices: [
        { index: 0, name: 'RTX A', vramBytes: 24 * GIB, freeVramBytes: 20 * GIB, driverVersion: '12.4', computeCapability: '8.9' },
        { index: 1, name: 'RTX B', vramBytes: 24 * GIB, freeVramBytes: 20 * GIB, driverVersion: 'unknown', computeCapability: '8.9' },
      ],
      note: '',
      cpuIsa: 'avx2',
    });
  });

  it.each([
    [{ cudaCompiled: true, error: 'cudaGetDeviceCount: no CUDA-capable device' }, 'cudaGetDeviceCount: no CUDA-capable device'],
    [{ cudaCompiled: true, error: '' }, 'no CUDA device found'],
    [{ cudaCompiled: false, error: '' }, 'built without CUDA'],
  ])('says why the CPU is used: %j', (probe, note) => {
    addon.probe = { ...probe, devices: [], cpuIsa: 'avx512-vnni' };
    expect(probeNativeDevices()).toEqual({ label: 'CPU', cudaCompiled: probe.cudaCompiled, devices: [], note, cpuIsa: 'avx512-vnni' });
  });
});

describe('createNativeEngine', () => {
  const engine = createNativeEngine();

  it('loads bf16 from the checkpoint and int4 from the packed folder, passing only the options given', async () => {
    await engine.load({ modelDir: '/m', packedDir: '/m/int4-g32', weights: 'bf16', backend: 'auto' });
    await engine.load({ modelDir: '/m', packedDir: '/m/int4-g32', weights: 'int4', backend: 'cpu', maxContext: 256, maxSequences: 4 });
    expect(addon.loads).toEqual([
      { dir: '/m', weights: 'bf16', backend: 'cpu' },
      { dir: '/m/int4-g32', weights: 'int4', backend: 'cpu', maxContext: 256, maxSequences: 4 },
    ]);
    await expect(engine.load({ modelDir: '/m', packedDir: null, weights: 'int4', backend: 'cpu' })).rejects.toThrow(
      '/m: int4 weights need the packed folder',
    );
    expect(addon.loads).toHaveLength(2);
  });

  it('runs on the CUDA device asked for, with the expert budget, and labels it', async () => {
    addon.probe = { cudaCompiled: true, error: '', cpuIsa: 'avx2', devices: [cudaDevice(0, 'RTX A'), cudaDevice(1, 'RTX B')] };
    const model = await engine.load({ modelDir: '/m', packedDir: '/p', weights: 'int4', backend: 'auto', expertBudgetBytes: GIB, cudaDevice: 1 });
    expect(addon.loads).toEqual([{ dir: '/p', weights: 'int4', backend: 'cuda', expertBudget: GIB, device: 1 }]);
    expect(model).toMatchObject({ backend: 'cuda', deviceLabel: 'RTX B (24.0 GiB)', vocabSize: 300, maxContext: 512 });
    expect(model.deviceMemory()).toEqual({ device: 1, bytes: 5 * GIB });
  });

  it('gives each result without its stop token, and the figures of the backend', async () => {
    addon.probe = { cudaCompiled: true, error: '', cpuIsa: 'avx2', devices: [cudaDevice(0, 'RTX A')] };
    const model = await engine.load({ modelDir: '/m', packedDir: '/p', weights: 'int4', backend: 'cuda' });
    const fake = addon.model!;
    fake.state.ends = [[0, 5], [0, 2, result([5, 2], 'stop')]];
    fake.state.output = { results: [result([5, 2], 'stop'), result([7, 8], 'length'), result([], 'cancelled')], stats: stats({ peakMemoryScope: 'device' }) };
    const tokens: unknown[] = [];
    const out = await model.generate([[1], [1], [1]], { ...policy, batch: 2 }, (...a) => void tokens.push(a), new AbortController().signal);
    expect(fake.state.requests).toEqual([{ prompts: [[1], [1], [1]], maxNewTokens: 8, stopTokens: [2], batch: 2 }]);
    expect(tokens).toEqual([
      [0, 5, undefined],
      [0, 2, { tokenIds: [5], finishReason: 'stop', ttftMs: 12.5, decodeTokensPerSecond: 40 }],
    ]);
    expect(out).toEqual({
      items: [
        { tokenIds: [5], finishReason: 'stop', ttftMs: 12.5, decodeTokensPerSecond: 40 },
        { tokenIds: [7, 8], finishReason: 'length', ttftMs: 12.5, decodeTokensPerSecond: 40 },
        // No token, no time to a first one.
        { tokenIds: [], finishReason: 'cancelled', ttftMs: -1, decodeTokensPerSecond: 40 },
      ],
      peakMemoryBytes: 3 * GIB,
      peakMemoryScope: 'device',
      h2dBytes: 7,
      // The cache's counts as the native stats gave them (evictions absent: 0).
      expertCache: { hits: 0, misses: 0, evictions: 0 },
    });
    fake.state.output = { results: [], stats: stats({ peakMemoryScope: 'process' }) };
    expect((await model.generate([], policy, () => undefined, new AbortController().signal)).peakMemoryScope).toBe('process');
    fake.state.output = { results: [], stats: stats({ expertHits: 50, expertMisses: 5, expertEvictions: 2 }) };
    expect((await model.generate([], policy, () => undefined, new AbortController().signal)).expertCache).toEqual({ hits: 50, misses: 5, evictions: 2 });
    expect(fake.state.requests[1]).not.toHaveProperty('batch');
  });

  it('reports no GPU figures on the CPU', async () => {
    const model = await engine.load({ modelDir: '/m', packedDir: null, weights: 'bf16', backend: 'cpu' });
    addon.model!.state.output = { results: [], stats: stats({ peakMemoryScope: 'estimate' }) };
    expect(await model.generate([], policy, () => undefined, new AbortController().signal)).toEqual({ items: [], peakMemoryBytes: 0, peakMemoryScope: null, h2dBytes: 7, expertCache: null });
    expect(model).toMatchObject({ backend: 'cpu', deviceLabel: 'CPU', residency: 'host memory, 3 threads' });
    expect(model.deviceMemory()).toBeNull();
  });

  it('closes the model once, and keeps answering its fault and no device memory after', async () => {
    addon.probe = { cudaCompiled: true, error: '', cpuIsa: 'avx2', devices: [cudaDevice(0, 'RTX A')] };
    const model = await engine.load({ modelDir: '/m', packedDir: '/p', weights: 'int4', backend: 'cuda' });
    const fake = addon.model!;
    expect(model.fault()).toBe('');
    fake.state.fault = 'CUDA error: an illegal memory access was encountered';
    model.dispose();
    model.dispose();
    expect(fake.state.closed).toBe(1);
    expect(model.fault()).toBe('CUDA error: an illegal memory access was encountered');
    expect(model.deviceMemory()).toBeNull();
  });
});
