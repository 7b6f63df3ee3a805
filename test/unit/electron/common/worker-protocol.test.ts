import { describe, expect, it } from 'vitest';

import { checkResponseValue, parseWorkerMessage, parseWorkerRequest } from '../../../../electron/common/worker-protocol.js';

const policy = { decoding: 'greedy', maxNewTokens: 8, stopTokenIds: [0] };

describe('parseWorkerRequest', () => {
  it.each([
    [{ seq: 1, request: { type: 'probe' } }],
    [{ seq: 2, request: { type: 'load', modelDir: '/m', packedDir: '/p', weights: 'int4', backend: 'auto' } }],
    [{ seq: 3, request: { type: 'encode-chat', prompts: ['a', 'b'] } }],
    [{ seq: 4, request: { type: 'generate', jobId: 'j', items: [{ itemId: '1', tokenIds: [1, 2] }], policy } }],
    [{ seq: 5, request: { type: 'cancel', jobId: 'j' } }],
    [{ seq: 6, request: { type: 'unload' } }],
    [{ seq: 7, request: { type: 'decode', tokenIds: [3] } }],
    [{ seq: 8, request: { type: 'load', modelDir: '/m', packedDir: null, weights: 'bf16', backend: 'cpu', maxContext: 2048 } }],
    [{ seq: 9, request: { type: 'load', modelDir: '/m', packedDir: '/p', weights: 'int4', backend: 'cuda', expertBudgetBytes: 6 * 2 ** 30, maxSequences: 16 } }],
    [{ seq: 10, request: { type: 'load', modelDir: '/m', packedDir: '/p', weights: 'int4', backend: 'cuda', cudaDevice: 1 } }],
    [{ seq: 11, request: { type: 'decode', tokenIds: [3, 4], prefix: true } }],
  ])('accepts %j', (msg) => {
    const r = parseWorkerRequest(msg);
    expect(r.ok).toBe(true);
    if (r.ok) expect(r.value).toEqual(msg);
  });

  it.each([
    [{ request: { type: 'probe' } }, /seq: integer/],
    [{ seq: 1, request: { type: 'fly' } }, /unknown request type "fly"/],
    [{ seq: 1, request: { type: 'load', modelDir: '/m', packedDir: null, weights: 'fp8', backend: 'auto' } }, /load.weights/],
    [{ seq: 1, request: { type: 'load', modelDir: '/m', packedDir: null, weights: 'int4', backend: 'auto' } }, /packedDir is required/],
    [{ seq: 1, request: { type: 'load', modelDir: '/m', packedDir: null, weights: 'bf16', backend: 'cpu', maxContext: 0 } }, /load.maxContext/],
    [{ seq: 1, request: { type: 'load', modelDir: '/m', packedDir: null, weights: 'bf16', backend: 'cpu', maxContext: 1.5 } }, /load.maxContext/],
    [{ seq: 1, request: { type: 'load', modelDir: '/m', packedDir: null, weights: 'bf16', backend: 'cpu', expertBudgetBytes: 0 } }, /load.expertBudgetBytes/],
    [{ seq: 1, request: { type: 'load', modelDir: '/m', packedDir: null, weights: 'bf16', backend: 'cpu', maxSequences: 0 } }, /load.maxSequences/],
    [{ seq: 1, request: { type: 'load', modelDir: '/m', packedDir: '/p', weights: 'int4', backend: 'cuda', cudaDevice: 64 } }, /load.cudaDevice must be an integer in 0..63/],
    [{ seq: 1, request: { type: 'load', modelDir: '/m', packedDir: '/p', weights: 'int4', backend: 'cuda', cudaDevice: -1 } }, /load.cudaDevice/],
    [{ seq: 1, request: { type: 'decode', tokenIds: [3], prefix: 'yes' } }, /decode.prefix must be a boolean/],
    [{ seq: 1, request: { type: 'generate', jobId: 'j', items: [], policy } }, /items must be a non-empty array/],
    [{ seq: 1, request: { type: 'generate', jobId: 'j', items: [{ itemId: '1', tokenIds: [-1] }], policy } }, /items\[0\]/],
    [
      { seq: 9, request: { type: 'generate', jobId: 'j', items: [{ itemId: '1', tokenIds: [1] }], policy: { ...policy, maxNewTokens: 0 } } },
      /worker request 9: generate.policy.maxNewTokens/,
    ],
  ])('rejects %j', (msg, problem) => {
    const r = parseWorkerRequest(msg);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.problem).toMatch(problem);
  });
});

describe('parseWorkerMessage', () => {
  it('accepts replies and events', () => {
    expect(parseWorkerMessage({ seq: 1, ok: true, value: 3 })).toEqual({ ok: true, value: { seq: 1, ok: true, value: 3 } });
    expect(parseWorkerMessage({ seq: 2, ok: false, error: { code: 'INTERNAL', message: 'x' } }).ok).toBe(true);
    expect(parseWorkerMessage({ event: 'token', jobId: 'j', itemId: 'i', tokenId: 5, count: 1 }).ok).toBe(true);
    expect(parseWorkerMessage({ event: 'ready', pid: 10 }).ok).toBe(true);
  });

  it('rejects malformed replies and unknown events', () => {
    expect(parseWorkerMessage({ seq: 1, ok: false })).toMatchObject({ ok: false, problem: /ok:false\+error/ });
    expect(parseWorkerMessage({ event: 'token', jobId: 'j' })).toMatchObject({ ok: false });
    expect(parseWorkerMessage({ event: 'boom' })).toMatchObject({ ok: false, problem: /unknown worker event "boom"/ });
  });
});

describe('checkResponseValue', () => {
  const item = { itemId: 'a', tokenIds: [1], text: 'x', finishReason: 'stop', ttftMs: 1, decodeTokensPerSecond: 2 };
  it('accepts values of the right shape', () => {
    expect(checkResponseValue('generate', { items: [item], wallMs: 1, peakMemoryBytes: 0, peakMemoryScope: null, h2dBytes: 0 })).toBeNull();
    for (const peakMemoryScope of ['process', 'device']) {
      expect(checkResponseValue('generate', { items: [item], wallMs: 1, peakMemoryBytes: 9, peakMemoryScope, h2dBytes: 0 })).toBeNull();
    }
    const gen = { items: [item], wallMs: 1, peakMemoryBytes: 9, peakMemoryScope: 'process', h2dBytes: 0 };
    expect(checkResponseValue('generate', { ...gen, expertCache: { hits: 3, misses: 1, evictions: 0 } })).toBeNull();
    expect(checkResponseValue('generate', { ...gen, expertCache: null })).toBeNull();
    expect(checkResponseValue('cancel', false)).toBeNull();
    expect(checkResponseValue('encode-chat', [{ text: 't', tokenIds: [1, 2] }])).toBeNull();
    expect(checkResponseValue('probe', { label: 'CPU', cudaCompiled: false, devices: [], note: 'x', cpuIsa: 'avx2' })).toBeNull();
  });
  it('names what is wrong', () => {
    for (const peakMemoryScope of ['gpu', undefined]) {
      expect(checkResponseValue('generate', { items: [item], wallMs: 1, peakMemoryBytes: 0, peakMemoryScope, h2dBytes: 0 })).toBe(
        'generate value: peakMemoryScope must be process, device or null',
      );
    }
    expect(checkResponseValue('generate', { items: [{ ...item, finishReason: 'eos' }], wallMs: 1, peakMemoryBytes: 0, peakMemoryScope: null, h2dBytes: 0 })).toBe(
      'generate value: items[0].finishReason must be stop, length or cancelled',
    );
    for (const expertCache of [{ hits: 1, misses: -1, evictions: 0 }, { hits: 1, misses: 1 }, 5]) {
      expect(checkResponseValue('generate', { items: [item], wallMs: 1, peakMemoryBytes: 0, peakMemoryScope: null, h2dBytes: 0, expertCache })).toBe(
        'generate value: expertCache needs hits, misses and evictions (counts)',
      );
    }
    expect(checkResponseValue('load', { backend: 'GPU' })).toMatch(/^load value needs/);
    // A worker whose addon reports no kernel path would leave a CPU run's batch to a guess.
    expect(checkResponseValue('probe', { label: 'CPU', cudaCompiled: false, devices: [], note: 'x' })).toBe(
      'probe value needs label, cudaCompiled, devices, note and cpuIsa',
    );
    expect(checkResponseValue('decode', 3)).toBe('decode value must be a string');
  });
});
