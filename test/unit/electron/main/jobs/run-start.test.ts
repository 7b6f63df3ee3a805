import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

import Database from 'better-sqlite3';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';

import { ok } from '../../../../../electron/common/result.js';
import type { DeviceProbe, WorkerDeviceInfo, WorkerRequest } from '../../../../../electron/common/worker-protocol.js';
import { migrate } from '../../../../../electron/main/db/open-database.js';
import { ResponseRepo } from '../../../../../electron/main/db/response-repo.js';
import { RunRepo } from '../../../../../electron/main/db/run-repo.js';
import { DEFAULT_BATCH, type EvalRunDeps, type RuntimeClient } from '../../../../../electron/main/jobs/eval-run.js';
import type { ModelSource } from '../../../../../electron/main/jobs/model-source.js';
import { RunStartError, startEvalRun, type RunStart } from '../../../../../electron/main/jobs/run-start.js';
import { writeTinyTokenizer } from '../../worker/tiny-tokenizer.js';

const gpu = (index: number): WorkerDeviceInfo => ({
  index, name: `GPU ${index}`, vramBytes: 24 * 2 ** 30, freeVramBytes: 20 * 2 ** 30, driverVersion: '13.0', computeCapability: '8.9',
});

describe('startEvalRun', () => {
  let dir: string;
  let db: Database.Database;
  let probes: number;
  let devices: WorkerDeviceInfo[];
  let deps: EvalRunDeps;
  let source: ModelSource;

  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'horizon-run-start-'));
    await writeTinyTokenizer(dir);
    source = { modelId: 'local:tiny/bf16', repo: 'local/tiny', revision: 'r', modelDir: dir, packedDir: null, weights: 'bf16', manifestJson: '{}', manifestSha256: '0'.repeat(64) };
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));
  beforeEach(() => {
    db = new Database(':memory:');
    migrate(db);
    probes = 0;
    devices = [];
    const runtime = {
      state: 'ready',
      request: async (req: WorkerRequest) => {
        if (req.type !== 'probe') throw new Error(`unexpected ${req.type}`);
        probes++;
        const probe: DeviceProbe = { label: devices.length ? 'CUDA' : 'CPU', cudaCompiled: true, devices, note: devices.length ? '' : 'no CUDA device found', cpuIsa: 'avx2' };
        return ok(probe);
      },
      restart: async () => ok(undefined),
    } as unknown as RuntimeClient;
    deps = { runs: new RunRepo(db), responses: new ResponseRepo(db), runtime, records: [], tools: {} as EvalRunDeps['tools'] };
  });

  const start = (over: Partial<RunStart>) =>
    startEvalRun(deps, { runId: 'r1', source, appVersion: '0.1.0', datasetSha256: 'x', ...over }, (p) =>
      p.kind === 'no-cuda' ? `no CUDA: ${p.note}` : `no device ${p.device} among ${p.devices.map((d) => d.index).join(',')}`,
    );

  it.each([
    ['CUDA asked for on a machine without a GPU', { backend: 'cuda' as const }, [], 'no CUDA: no CUDA device found'],
    ['a device index on a machine without a GPU', { cudaDevice: 0 }, [], 'no CUDA: no CUDA device found'],
    ['a device the machine does not have', { cudaDevice: 2 }, [gpu(0), gpu(1)], 'no device 2 among 0,1'],
    ['a device the machine does not have, under --backend cuda', { backend: 'cuda' as const, cudaDevice: 5 }, [gpu(0)], 'no device 5 among 0'],
  ])('refuses %s before storing anything', async (_why, over, have, message) => {
    devices = have;
    const e = await start(over).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(RunStartError);
    expect(e).toMatchObject({ code: 'BAD_INPUT', message });
    expect(deps.runs.list()).toEqual([]);
  });

  it.each([
    ['auto on a machine without a GPU runs on the CPU', { backend: 'auto' as const }, [], 1],
    ['a device the machine has', { cudaDevice: 1 }, [gpu(0), gpu(1)], 1],
    ['the CPU, without asking the worker', { backend: 'cpu' as const, cudaDevice: undefined }, [gpu(0)], 0],
  ])('stores a run for %s', async (_why, over, have, probed) => {
    devices = have;
    const run = await start(over);
    expect(run).toMatchObject({ id: 'r1', status: 'queued', backend: 'pending' });
    expect(deps.runs.list().map((r) => r.id)).toEqual(['r1']);
    expect(probes).toBe(probed);
  });

  it('sizes the batch when none is asked for, and keeps the one asked for', async () => {
    expect((await start({})).policy.batch).toBe(DEFAULT_BATCH);
    expect((await start({ runId: 'r2', batch: 3 })).policy.batch).toBe(3);
  });
});
