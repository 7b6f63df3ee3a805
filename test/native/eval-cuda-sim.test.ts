/**
 * `horizon eval --backend cuda` end to end (CLI, runtime worker, binding, CUDA backend) on the CUDA simulator addon,
 * with full and with partial expert residency, against the same run on the CPU backend. The simulator executes the
 * backend's kernels on the CPU; it checks the CUDA path's logic, never GPU speed. Skipped only when the simulator
 * addon is not built (no nvcc). To add a case, add an `it` that calls `evalRun` with the simulator's env.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { openDatabase } from '../../electron/main/db/open-database.js';
import { ResponseRepo } from '../../electron/main/db/response-repo.js';
import { RunRepo } from '../../electron/main/db/run-repo.js';
import type { RunRecord } from '../../electron/main/db/run-repo.js';
import { packModel } from '../../electron/worker/runtime/pack.js';
import { makeTinyModel } from '../../scripts/make-tiny-model.js';
import type { TinyModel } from '../../scripts/make-tiny-model.js';
import { SIM_ADDON, SIM_DEVICE_NAME, simAddonMissing } from './cuda-sim-addon.js';

const CLI = join(resolve(import.meta.dirname, '..', '..'), 'scripts', 'horizon.mjs');
// Three prompts in batches of 2 (a full and a partial batch) on a one-layer model: the simulator prefills a few hundred
// tokens a second and these prompts hold about 700.
const EVAL_ARGS = ['--limit', '3', '--batch', '2', '--max-new-tokens', '8'];
const PARTIAL_SLOTS = 2;

type EvalOutcome = {
  readonly stdout: string;
  readonly run: RunRecord;
  readonly responses: readonly { key: number; response: string; tokens: number; finishReason: string }[];
};

/** Bytes of one expert slot on every layer, as the CUDA backend lays it out (make_layout in native/src/cuda/cuda-backend.cpp). */
function expertSlotBytesAllLayers(tiny: TinyModel, groupSize: number): number {
  const h = tiny.config.hidden_size;
  const i = tiny.config.intermediate_size;
  const align = (n: number) => Math.ceil(n / 256) * 256;
  const sGu = align(2 * i * (h / 2));
  const qD = align(sGu + 2 * i * (h / groupSize) * 2);
  const sD = align(qD + h * (i / 2));
  return align(sD + h * (i / groupSize) * 2) * tiny.config.num_hidden_layers;
}

describe.skipIf(simAddonMissing !== '')(
  `horizon eval --backend cuda on the CUDA simulator (CPU)${simAddonMissing ? ` (skipped: ${simAddonMissing})` : ''}`,
  // The two simulator runs are single-threaded child processes, so they run side by side.
  { concurrent: true },
  () => {
    let root: string;
    let tiny: TinyModel;
    let groupSize: number;
    let cpu: EvalOutcome;

    /**
     * Runs `horizon eval` on the tiny model (or `--resume RUN_ID` of a run there) in a child process, with its own data
     * folder; reads the stored run back. A failed run (exit code 1) is returned when `mayFail`.
     */
    async function evalRun(
      name: string,
      extra: string[],
      env: NodeJS.ProcessEnv,
      { resume, mayFail = false }: { resume?: string; mayFail?: boolean } = {},
    ): Promise<EvalOutcome> {
      const dataDir = join(root, name);
      const args = resume ? ['--resume', resume] : ['--model', tiny.dir, ...EVAL_ARGS, ...extra];
      let stdout: string;
      try {
        ({ stdout } = await promisify(execFile)(process.execPath, [CLI, 'eval', ...args, '--data-dir', dataDir], {
          env,
          maxBuffer: 16 << 20,
        }));
      } catch (e) {
        const failed = e as { code?: unknown; stdout?: string };
        if (!mayFail || failed.code !== 1) throw e;
        stdout = failed.stdout ?? '';
      }
      const db = openDatabase(join(dataDir, 'runmap.sqlite'));
      try {
        const runs = new RunRepo(db).list();
        if (runs.length !== 1) throw new Error(`${dataDir} holds ${runs.length} runs, expected 1`);
        const run = runs[0]!;
        const responses = new ResponseRepo(db)
          .all(run.id)
          .map(({ key, response, tokens, finishReason }) => ({ key, response, tokens, finishReason }));
        return { stdout, run, responses };
      } finally {
        db.close();
      }
    }

    const simEnv = () => ({ ...process.env, HORIZON_NATIVE_ADDON: SIM_ADDON });

    beforeAll(async () => {
      root = mkdtempSync(join(tmpdir(), 'horizon-eval-cuda-sim-'));
      tiny = await makeTinyModel(join(root, 'tiny'), { seed: 5, layers: 1 });
      groupSize = (await packModel({ src: tiny.dir, dst: join(tiny.dir, 'int4-g32') })).group_size;
      const { HORIZON_NATIVE_ADDON: _ignored, ...env } = process.env;
      cpu = await evalRun('cpu', ['--backend', 'cpu'], env);
      expect(cpu.run).toMatchObject({ status: 'completed', backend: 'cpu' });
      expect(cpu.responses).toHaveLength(3);
    });
    afterAll(() => {
      if (root) rmSync(root, { recursive: true, force: true });
    });

    // Greedy decoding of the same INT4 weights. The CUDA path keeps activations and KV in FP16 where the CPU uses FP32,
    // which could flip a near-tie argmax; on this seeded model every response agrees, so they are compared exactly.
    it('with every expert resident: completes, stores backend CUDA on the simulator, same responses as the CPU', async ({ expect }) => {
      const full = await evalRun('full', ['--backend', 'cuda'], simEnv());
      expect(full.stdout).toMatch(/run \S+ completed \(3\/3 responses\)/);
      expect(full.run).toMatchObject({ status: 'completed', backend: 'cuda', residency: 'all 8 int4 experts of every layer resident on the GPU' });
      expect(full.run.deviceLabel).toMatch(new RegExp(`^${SIM_DEVICE_NAME} \\(`));
      expect(full.responses).toEqual(cpu.responses);
    });

    it('a device fault fails the run naming it and restarts the worker; a resume completes with the CPU responses', async ({ expect }) => {
      const gib = ((PARTIAL_SLOTS + 0.5) * expertSlotBytesAllLayers(tiny, groupSize)) / 2 ** 30;
      // The 12th expert copy of the worker process faults (sticky, as a GPU context after an illegal access).
      const faulted = await evalRun('fault', ['--backend', 'cuda', '--expert-budget', gib.toFixed(12)], {
        ...simEnv(),
        RT_CUDA_SIM_FAULT_PINNED_H2D: '12',
      }, { mayFail: true });
      expect(faulted.run.status).toBe('failed');
      expect(faulted.run.error).toMatch(
        /^generation failed: DEVICE_FAULT: CUDA backend: .*an illegal memory access was encountered \(cuda-sim\) \(the model was unloaded; .*\); the runtime worker was restarted$/,
      );
      expect(faulted.responses.length).toBeLessThan(3);
      const resumed = await evalRun('fault', [], simEnv(), { resume: faulted.run.id });
      expect(resumed.stdout).toMatch(/run \S+ completed \(3\/3 responses\)/);
      expect(resumed.responses).toEqual(cpu.responses);
    });

    it('--device 1 on a machine with two devices: records the device, loads the model on it, same responses as the CPU', async ({ expect }) => {
      const second = await evalRun('device-1', ['--backend', 'cuda', '--device', '1'], { ...simEnv(), RT_CUDA_SIM_DEVICES: '2' });
      expect(second.stdout).toMatch(/run \S+ completed \(3\/3 responses\)/);
      expect(second.run.policy.cudaDevice).toBe(1);
      expect(second.run.deviceLabel).toMatch(new RegExp(`^${SIM_DEVICE_NAME} \\(`));
      expect(second.responses).toEqual(cpu.responses);
      // The same request on a machine with one device fails naming what exists, before a run is stored.
      const dataDir = join(root, 'device-1-missing');
      const missing = await promisify(execFile)(
        process.execPath,
        [CLI, 'eval', '--model', tiny.dir, ...EVAL_ARGS, '--backend', 'cuda', '--device', '1', '--data-dir', dataDir],
        { env: simEnv() },
      ).then(
        () => ({ code: 0, stderr: '' }),
        (e: { code?: number; stderr?: string }) => ({ code: e.code, stderr: e.stderr ?? '' }),
      );
      expect(missing).toEqual({ code: 1, stderr: 'horizon eval: --device 1: no such CUDA device (there are: 0; see npx horizon devices)\n' });
      const db = openDatabase(join(dataDir, 'runmap.sqlite'));
      try {
        expect(new RunRepo(db).list()).toEqual([]);
      } finally {
        db.close();
      }
    });

    it(`with a budget of ${PARTIAL_SLOTS} expert slots per layer: completes with partial residency, same responses as the CPU`, async ({ expect }) => {
      // Half a slot above PARTIAL_SLOTS, so the floor in expert_cache_slots_for_budget lands on it.
      const gib = ((PARTIAL_SLOTS + 0.5) * expertSlotBytesAllLayers(tiny, groupSize)) / 2 ** 30;
      const partial = await evalRun('partial', ['--backend', 'cuda', '--expert-budget', gib.toFixed(12)], simEnv());
      expect(partial.stdout).toMatch(/run \S+ completed \(3\/3 responses\)/);
      expect(partial.run).toMatchObject({ status: 'completed', backend: 'cuda' });
      expect(partial.run.residency).toBe(
        `${PARTIAL_SLOTS} of 8 int4 experts per layer cached on the GPU, the rest copied from pinned host memory on demand`,
      );
      expect(partial.run.deviceLabel).toMatch(new RegExp(`^${SIM_DEVICE_NAME} \\(`));
      expect(partial.responses).toEqual(cpu.responses);
    });
  },
);
