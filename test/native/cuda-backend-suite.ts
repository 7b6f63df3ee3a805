/**
 * The CUDA backend's device cases through the addon, shared by runtime-cuda.test.ts (a real GPU) and
 * runtime-cuda-sim.test.ts (the CUDA simulator addon): INT4 logits against the CPU backend, full vs partial expert
 * residency (same greedy tokens, D2H 0) and counters. To add a case, add an `it` inside `describeCudaBackend`.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { loadModel, loadNativeBinding, packNative } from '../../electron/worker/runtime/binding.js';
import type { NativeModel } from '../../electron/worker/runtime/binding.js';
import { makeTinyModel } from '../../scripts/make-tiny-model.js';

/** Max |cuda - cpu| logit difference relative to the largest |logit| (FP16 activations and KV on the GPU). */
const MAX_REL_ERR_CUDA_VS_CPU = 3e-2;
/** The same for one backend's rows computed alone against those of a longer call (accumulation order at most). */
const MAX_REL_ERR_ROWS_ALONE = 1e-3;

export const PROMPT = [5, 17, 42, 9, 60, 11, 2, 33];

/** Whether the addon this process loaded has the runtime and a usable CUDA device, with the reason when not. */
export function cudaState(): { runtime: boolean; device: boolean; reason: string } {
  try {
    const b = loadNativeBinding();
    if (typeof b.loadModel !== 'function') return { runtime: false, device: false, reason: 'addon has no loadModel' };
    const probe = b.probeDevices();
    if (!probe.cudaCompiled) return { runtime: true, device: false, reason: 'addon built without CUDA' };
    if (probe.devices.length === 0) return { runtime: true, device: false, reason: probe.error || 'no CUDA device' };
    return { runtime: true, device: true, reason: '' };
  } catch (e) {
    return { runtime: false, device: false, reason: (e as Error).message };
  }
}

/** The device cases under `title`, skipped unless `run`. */
export function describeCudaBackend(title: string, run: boolean): void {
  describe.skipIf(!run)(title, () => {
    let root: string;
    let packed: string;
    let cpu: NativeModel;
    let full: NativeModel;

    beforeAll(async () => {
      root = mkdtempSync(join(tmpdir(), 'horizon-cuda-'));
      const tiny = await makeTinyModel(join(root, 'tiny'), { seed: 7 });
      packed = join(root, 'int4');
      await packNative({ src: tiny.dir, dst: packed, threads: 2 });
      cpu = await loadModel({ dir: packed, weights: 'int4', backend: 'cpu', threads: 2 });
      full = await loadModel({ dir: packed, weights: 'int4', backend: 'cuda', maxContext: 128 });
    });
    afterAll(() => {
      cpu?.close();
      full?.close();
      if (root) rmSync(root, { recursive: true, force: true });
    });

    it('runs on the device it is given and refuses an index past the last, naming how many exist', async () => {
      expect(full.info().device).toBe(0);
      expect(cpu.info().device).toBe(-1);
      const count = loadNativeBinding().probeDevices().devices.length;
      await expect(loadModel({ dir: packed, weights: 'int4', backend: 'cuda', device: count })).rejects.toThrow(
        `CUDA device ${count} does not exist (${count} found)`,
      );
    });

    it('labels the backend cuda and matches the CPU logits', async () => {
      expect(full.info().backend).toBe('cuda');
      expect(full.info().deviceExpertSlots).toBe(full.info().numExperts);
      expect(full.info().fault).toBe('');
      const a = await cpu.logits(PROMPT);
      const b = await full.logits(PROMPT);
      let maxAbs = 0;
      let maxDiff = 0;
      a.forEach((row, i) =>
        row.forEach((v, j) => {
          maxAbs = Math.max(maxAbs, Math.abs(v));
          maxDiff = Math.max(maxDiff, Math.abs(v - b[i]![j]!));
        }),
      );
      expect(maxDiff / maxAbs).toBeLessThanOrEqual(MAX_REL_ERR_CUDA_VS_CPU);
      // The rows from a position on alone (the quality check's passes): the whole call's rows (to the bit on the
      // simulator; a GPU's LM head may tile six rows unlike eight, hence the bound, far below a shifted row's).
      const tail = await full.logits(PROMPT, { from: 2 });
      expect(tail).toHaveLength(PROMPT.length - 2);
      let tailDiff = 0;
      tail.forEach((row, i) => row.forEach((v, j) => (tailDiff = Math.max(tailDiff, Math.abs(v - b[i + 2]![j]!)))));
      expect(tailDiff / maxAbs).toBeLessThanOrEqual(MAX_REL_ERR_ROWS_ALONE);
    });

    it('partial residency gives the same greedy tokens as full residency and copies nothing back', async () => {
      const request = { prompts: [PROMPT, [100, 3]], maxNewTokens: 12, stopTokens: [] };
      const f = await full.generate(request);
      const freeBytes = () => loadNativeBinding().probeDevices().devices[0]?.freeMemoryBytes ?? 0;
      const freeBefore = freeBytes();
      const partial = await loadModel({ dir: packed, weights: 'int4', backend: 'cuda', maxContext: 128, expertSlots: 1 });
      try {
        expect(partial.info().deviceExpertSlots).toBe(1);
        // What the model holds is what its load took from the device (a GPU rounds allocations up).
        const held = partial.info().deviceBytes;
        expect(held).toBeGreaterThan(0);
        expect(freeBefore - freeBytes()).toBeGreaterThanOrEqual(held);
        expect(freeBefore - freeBytes()).toBeLessThanOrEqual(held * 1.25 + 64 * 2 ** 20);
        const p = await partial.generate(request);
        expect(p.results.map((r) => r.tokens)).toEqual(f.results.map((r) => r.tokens));
        expect(p.stats.d2hBytes).toBe(0);
        expect(p.stats.expertMisses).toBeGreaterThan(0);
        expect(p.stats.h2dBytes).toBeGreaterThan(0);
        expect(p.stats.expertEvictions).toBeGreaterThan(0);
        expect(f.stats.expertMisses).toBe(0);
        expect(f.stats.peakMemoryBytes).toBeGreaterThan(0);
        // Where NVML cannot tell this process's memory (the simulator; Windows), the GPU's used memory stands in.
        expect(['process', 'device']).toContain(f.stats.peakMemoryScope);
      } finally {
        partial.close();
      }
    });

    it('generates more prompts than the backend holds sequences (1024) when no batch is given', async () => {
      const prompts = Array.from({ length: 1030 }, (_, i) => [(i % 200) + 3]);
      const out = await full.generate({ prompts, maxNewTokens: 1, stopTokens: [] });
      expect(out.results).toHaveLength(1030);
      expect(out.results.every((r) => r.tokens.length === 1)).toBe(true);
    });
  });
}
