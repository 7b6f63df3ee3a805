import { mkdir, mkdtemp, readFile, rm, truncate, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import type { DeviceProbe } from '../../../../../electron/common/worker-protocol.js';
import { autoBatch, chooseBatch, CPU_PLAN, CPU_VNNI_PLAN, cpuPlan, GPU_PLAN, kvBytesPerToken, qualityCheckCpuBatch } from '../../../../../electron/main/jobs/auto-batch.js';
import { DEFAULT_BATCH } from '../../../../../electron/main/jobs/eval-run.js';
import { RUN_BATCH } from '../../../../../electron/common/run-settings.js';
import type { ModelSource } from '../../../../../electron/main/jobs/model-source.js';

const GIB = 2 ** 30;
// OLMoE-1B-7B: 16 layers, 16 KV heads of 128 → 128 KiB of FP16 K and V per token; about 4.4 GiB of INT4 + FP16 weights.
const OLMOE = { weightBytes: 4.4 * GIB, kvBytesPerToken: 128 * 1024, contextTokens: 2048 };

describe('chooseBatch on a GPU', () => {
  const gpu = (gib: number, freeGib = gib) => chooseBatch(GPU_PLAN, { ...OLMOE, memoryBytes: gib * GIB, freeBytes: freeGib * GIB });
  it.each([
    ['an 80 GiB GPU', 80, 64],
    ['a 24 GiB GPU', 24, 48],
    ['a 16 GiB GPU', 16, 32],
    ['a 12 GiB GPU', 12, 16],
    ['an 8 GiB GPU', 8, 4],
    ['a 6 GiB GPU (the weights alone do not fit)', 6, RUN_BATCH.gpuFallback],
  ])('%s: %i GiB gives %i', (_name, gib, batch) => {
    expect(gpu(gib)).toBe(batch);
  });

  // 256 MiB of KV per sequence; room = min(90 % of the device - 1.5 GiB, free - 0.75 GiB) - 4.4 GiB of weights.
  it.each([
    ['an 8 GiB GPU with 2 GiB taken by the desktop', 8, 6, 2],
    ['a 24 GiB GPU with 10 GiB taken by another program', 24, 14, 32],
    ['an 80 GiB GPU with 40 GiB taken', 80, 40, 64],
    ['a 24 GiB GPU with the weights alone fitting in what is free', 24, 5.3, RUN_BATCH.gpuFallback],
  ])('%s: %i GiB, %i free gives %i', (_name, gib, free, batch) => {
    expect(gpu(gib, free)).toBe(batch);
  });

  it('takes a smaller batch for a longer context', () => {
    expect(chooseBatch(GPU_PLAN, { ...OLMOE, memoryBytes: 24 * GIB, freeBytes: 24 * GIB, contextTokens: 4096 })).toBe(24);
  });
});

describe('chooseBatch on the CPU', () => {
  // 256 MiB of KV per sequence; room = min(75 % of the host - 2 GiB, free - 1 GiB) - 4.4 GiB of weights.
  it.each([
    ['a 64 GiB host (16 is the most the CPU plans)', 64, 60, 16],
    ['a 16 GiB host', 16, 14, 16],
    ['a 12 GiB host', 12, 10, 8],
    ['a 16 GiB host with a browser open', 16, 8, 8],
    ['a 32 GiB host with 24 GiB taken', 32, 8, 8],
    ['a 16 GiB host with 9.5 GiB taken', 16, 6.5, 4],
    ['an 8 GiB host', 8, 7, 1],
  ])('%s: %i GiB, %i free gives %i', (_name, gib, free, batch) => {
    expect(chooseBatch(CPU_PLAN, { ...OLMOE, memoryBytes: gib * GIB, freeBytes: free * GIB })).toBe(batch);
  });

  it('never goes below one sequence', () => {
    expect(CPU_PLAN.noRoom).toBe(1);
    expect(chooseBatch(CPU_PLAN, { ...OLMOE, memoryBytes: 4 * GIB, freeBytes: 2 * GIB })).toBe(1);
  });

  // The same memory rule with up to 32 sequences: INT4 on the VNNI kernels.
  it.each([
    ['a 64 GiB host', 64, 60, 32],
    ['a 24 GiB host', 24, 20, 32],
    ['a 16 GiB host', 16, 14, 16],
    ['a 24 GiB host with 8 GiB taken', 24, 12, 24],
    ['an 8 GiB host', 8, 7, 1],
  ])('VNNI, %s: %i GiB, %i free gives %i', (_name, gib, free, batch) => {
    expect(chooseBatch(CPU_VNNI_PLAN, { ...OLMOE, memoryBytes: gib * GIB, freeBytes: free * GIB })).toBe(batch);
  });

  it.each([
    ['int4', 'avx512-vnni', CPU_VNNI_PLAN],
    ['int4', 'avx-vnni', CPU_VNNI_PLAN],
    ['int4', 'avx2', CPU_PLAN],
    ['int4', 'scalar', CPU_PLAN],
    ['int4', null, CPU_PLAN],
    ['bf16', 'avx512-vnni', CPU_PLAN],
    ['bf16', 'avx-vnni', CPU_PLAN],
  ] as const)('takes 32 only for INT4 on the VNNI kernels: %s on %s', (weights, isa, plan) => {
    expect(cpuPlan(weights, isa)).toBe(plan);
  });
});

describe('autoBatch', () => {
  let dir: string;
  let source: ModelSource;
  const gpu = (index: number, gib: number, freeGib = gib) => ({
    index, name: `GPU ${index}`, vramBytes: gib * GIB, freeVramBytes: freeGib * GIB, driverVersion: '13.0', computeCapability: '8.9',
  });
  const probeOf = (...devices: ReturnType<typeof gpu>[]): (() => Promise<DeviceProbe>) => async () => ({
    label: devices.length ? 'CUDA' : 'CPU', cudaCompiled: true, devices, note: devices.length ? '' : 'no CUDA device', cpuIsa: 'avx2',
  });

  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'horizon-autobatch-'));
    const packed = path.join(dir, 'int4-g128');
    await mkdir(packed);
    await writeFile(
      path.join(dir, 'config.json'),
      JSON.stringify({ num_hidden_layers: 16, num_attention_heads: 16, num_key_value_heads: 16, hidden_size: 2048 }),
    );
    // Tensor bytes are read from the packed folder's file sizes.
    await writeFile(path.join(packed, 'model.safetensors'), Buffer.alloc(3 * 2 ** 20));
    await writeFile(path.join(packed, 'notes.json'), Buffer.alloc(50 * 2 ** 20));
    source = {
      modelId: 'm', repo: 'r/m', revision: 'x', modelDir: dir, packedDir: packed, weights: 'int4', manifestJson: '{}',
      manifestSha256: '0'.repeat(64),
    };
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it('reads K and V bytes per token from config.json', async () => {
    expect(await kvBytesPerToken(dir)).toBe(2 * 16 * 16 * 128 * 2);
    expect(await kvBytesPerToken(path.join(dir, 'missing'))).toBeNull();
  });

  it('sizes for the device the run asks for, or the first', async () => {
    const contextTokens = async () => 16_384; // 2 GiB of KV per sequence
    // 6 GiB: 5.4 - 1.5 - 0.003 GiB of room = 1 sequence; 40 GiB: 34.5 GiB = 17 → 16.
    const probe = probeOf(gpu(0, 6), gpu(1, 40));
    expect(await autoBatch({ source, requestedBackend: 'auto', probe, contextTokens })).toBe(1);
    expect(await autoBatch({ source, requestedBackend: 'cuda', cudaDevice: 1, probe, contextTokens })).toBe(16);
  });

  it('takes the GPU fallback, not the CPU batch, for a GPU run whose config lacks the sizes', async () => {
    const bare = await mkdtemp(path.join(os.tmpdir(), 'horizon-autobatch-bare-'));
    try {
      await writeFile(path.join(bare, 'config.json'), JSON.stringify({ hidden_size: 2048 }));
      expect(RUN_BATCH.gpuFallback).not.toBe(DEFAULT_BATCH);
      const batch = await autoBatch({
        source: { ...source, modelDir: bare }, requestedBackend: 'auto', probe: probeOf(gpu(0, 80)), contextTokens: async () => 2048,
      });
      expect(batch).toBe(RUN_BATCH.gpuFallback);
    } finally {
      await rm(bare, { recursive: true, force: true });
    }
  });

  it('sizes for what the probe finds free', async () => {
    const contextTokens = async () => 16_384;
    // 40 GiB with 20 free: 19.25 GiB of room = 9 sequences → 8.
    expect(await autoBatch({ source, requestedBackend: 'auto', probe: probeOf(gpu(0, 40, 20)), contextTokens })).toBe(8);
  });

  // 2 GiB of KV per sequence on a 16 GiB host with 10 free: min(12 - 2, 10 - 1) GiB less the weights' 3 MiB → 4.
  const host = () => ({ totalBytes: 16 * GIB, freeBytes: 10 * GIB });
  it.each([
    ['the CPU backend is asked for', { requestedBackend: 'cpu' as const }],
    ['no CUDA device is found', { probe: probeOf() }],
    ['the probe fails', { probe: async () => null }],
    ['the device asked for is not found', { cudaDevice: 3 }],
    ['the model is BF16 (the CUDA backend runs INT4)', { bf16: true }],
  ])('sizes for the host memory when %s', async (_why, o: { requestedBackend?: 'cpu'; probe?: () => Promise<DeviceProbe | null>; cudaDevice?: number; bf16?: boolean }) => {
    let probed = false;
    const batch = await autoBatch({
      source: o.bf16 ? { ...source, weights: 'bf16', packedDir: null } : source,
      requestedBackend: o.requestedBackend ?? 'auto',
      ...(o.cudaDevice !== undefined ? { cudaDevice: o.cudaDevice } : {}),
      probe: async () => {
        probed = true;
        return (o.probe ?? probeOf(gpu(0, 80)))();
      },
      contextTokens: async () => 16_384,
      host,
    });
    expect(batch).toBe(4);
    // A BF16 run does not ask the worker (the CUDA backend runs INT4; the CPU's BF16 plan is one); an INT4 one does,
    // for the CPU's kernel path when it runs there.
    expect(probed).toBe(!o.bf16);
  });

  it('takes up to 32 for an INT4 run on the CPU where the worker reports VNNI kernels', async () => {
    // 128 MiB of KV per sequence on a 32 GiB host: min(24 - 2, 30 - 1) GiB of room → 32, where AVX2 stops at 16.
    const run = (cpuIsa: string, requestedBackend: 'auto' | 'cpu', weights: 'int4' | 'bf16' = 'int4') =>
      autoBatch({
        source: weights === 'bf16' ? { ...source, weights, packedDir: null } : source,
        requestedBackend,
        probe: async () => ({ ...(await probeOf()()), cpuIsa }),
        contextTokens: async () => 1024,
        host: () => ({ totalBytes: 32 * GIB, freeBytes: 30 * GIB }),
      });
    expect(await run('avx512-vnni', 'cpu')).toBe(32);
    expect(await run('avx512-vnni', 'auto')).toBe(32);
    expect(await run('avx-vnni', 'cpu')).toBe(32);
    expect(await run('avx2', 'cpu')).toBe(16);
    expect(await run('avx512-vnni', 'cpu', 'bf16')).toBe(16);
    // With a GPU found, the GPU's plan decides, whatever the CPU.
    const withGpu = await autoBatch({
      source, requestedBackend: 'auto', probe: async () => ({ ...(await probeOf(gpu(0, 80))()), cpuIsa: 'avx512-vnni' }),
      contextTokens: async () => 1024, host: () => ({ totalBytes: 32 * GIB, freeBytes: 30 * GIB }),
    });
    expect(withGpu).toBe(64);
  });

  it('counts a BF16 checkpoint\'s own weights against the host memory', async () => {
    const bf16 = await mkdtemp(path.join(os.tmpdir(), 'horizon-autobatch-bf16-'));
    try {
      await writeFile(path.join(bf16, 'config.json'), await readFile(path.join(dir, 'config.json')));
      // Sparse: its size is what is counted. 256 MiB of KV per sequence; min(10, 7) - 4.5 GiB = 2.5 → 8 (16 without it).
      const shard = path.join(bf16, 'model-00001-of-00001.safetensors');
      await writeFile(shard, '');
      await truncate(shard, 4.5 * GIB);
      const run = (modelDir: string) => autoBatch({
        source: { ...source, modelDir, weights: 'bf16', packedDir: null }, requestedBackend: 'auto', probe: probeOf(),
        contextTokens: async () => 2048, host: () => ({ totalBytes: 16 * GIB, freeBytes: 8 * GIB }),
      });
      expect(await run(bf16)).toBe(8);
      expect(await run(dir)).toBe(16);
    } finally {
      await rm(bf16, { recursive: true, force: true });
    }
  });

  it('keeps RUN_BATCH.cpuDefault for a CPU run whose config lacks the sizes', async () => {
    const bare = await mkdtemp(path.join(os.tmpdir(), 'horizon-autobatch-bare-'));
    try {
      await writeFile(path.join(bare, 'config.json'), JSON.stringify({ hidden_size: 2048 }));
      const batch = await autoBatch({
        source: { ...source, modelDir: bare }, requestedBackend: 'cpu', probe: probeOf(gpu(0, 80)), contextTokens: async () => 2048, host,
      });
      expect(batch).toBe(RUN_BATCH.cpuDefault);
      expect(DEFAULT_BATCH).toBe(RUN_BATCH.cpuDefault);
    } finally {
      await rm(bare, { recursive: true, force: true });
    }
  });
});

describe('qualityCheckCpuBatch', () => {
  let dir: string;
  let int4Dir: string;
  let bf16Dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'horizon-checkbatch-'));
    int4Dir = path.join(dir, 'int4-g32');
    bf16Dir = path.join(dir, 'bf16');
    await mkdir(int4Dir);
    await mkdir(bf16Dir);
    await writeFile(
      path.join(int4Dir, 'config.json'),
      JSON.stringify({ num_hidden_layers: 16, num_attention_heads: 16, num_key_value_heads: 16, hidden_size: 2048 }),
    );
    // Sparse files: only their sizes are read. OLMoE's 4.4 GiB of INT4 + FP16 and 13 GiB of BF16.
    await writeFile(path.join(int4Dir, 'model.safetensors'), '');
    await truncate(path.join(int4Dir, 'model.safetensors'), Math.round(4.4 * GIB));
    await writeFile(path.join(bf16Dir, 'model.safetensors'), '');
    await truncate(path.join(bf16Dir, 'model.safetensors'), 13 * GIB);
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  // 600 tokens of context: 75 MiB of KV a sequence; room = min(75 % of the host - 2, free - 1) - 17.4 GiB of weights.
  it.each([
    ['a 64 GiB host, AVX-512 VNNI', 64, 60, 'avx512-vnni', 32],
    ['a 64 GiB host, AVX2', 64, 60, 'avx2', 16],
    ['a 32 GiB host, AVX-VNNI', 32, 28, 'avx-vnni', 32],
    ['a 32 GiB host with 12 GiB taken, AVX-VNNI (1.6 GiB of room)', 32, 20, 'avx-vnni', 16],
    ['a 24 GiB host (both weight sets leave no room)', 24, 20, 'avx512-vnni', 8],
    ['an unanswered probe', 64, 60, null, 16],
  ] as const)('%s gives %i', async (_name, gib, free, cpuIsa, batch) => {
    const got = await qualityCheckCpuBatch({
      int4Dir, bf16Dir, cpuIsa, contextTokens: 600, floor: 8, host: { totalBytes: gib * GIB, freeBytes: free * GIB },
    });
    expect(got).toBe(batch);
  });

  it('keeps the floor where the config lacks the KV sizes', async () => {
    const got = await qualityCheckCpuBatch({
      int4Dir: bf16Dir, bf16Dir, cpuIsa: 'avx512-vnni', contextTokens: 600, floor: 8, host: { totalBytes: 64 * GIB, freeBytes: 60 * GIB },
    });
    expect(got).toBe(8);
  });
});
