import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import type { PrepareProgress } from '../../../../../electron/common/ipc-contract.js';
import { PrepError } from '../../../../../electron/main/prep/prep-error.js';
import type { prepareModel } from '../../../../../electron/main/prep/prepare-model.js';
import { ModelsService } from '../../../../../electron/main/services/models-service.js';

type Prepare = typeof prepareModel;

describe('ModelsService', () => {
  let dataDir: string;
  beforeAll(async () => {
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'horizon-models-'));
  });
  afterAll(() => rm(dataDir, { recursive: true, force: true }));

  const service = (prepare: Prepare, events: PrepareProgress[]) =>
    new ModelsService({ dataDir, hubUrl: 'http://hub', emit: (_n, p) => events.push(p as PrepareProgress), prepare });
  const settled = async (events: PrepareProgress[]) => {
    for (let i = 0; i < 200 && !events.some((e) => e.status !== 'running'); i++) await new Promise((r) => setTimeout(r, 5));
    return events.at(-1)!;
  };

  it('relays preparation progress as models:onDidProgress and ends with done', async () => {
    const events: PrepareProgress[] = [];
    const seen: Parameters<Prepare>[0][] = [];
    const fake: Prepare = async (opts) => {
      seen.push(opts);
      opts.onEvent?.({ type: 'phase', phase: 'download', message: 'downloading' });
      opts.onEvent?.({ type: 'progress', phase: 'download', file: 'model.safetensors', doneBytes: 50, totalBytes: 100, bytesPerSec: 10, etaSec: 5 });
      opts.onEvent?.({ type: 'progress', phase: 'pack', doneBytes: 1, totalBytes: 2, bytesPerSec: 1, etaSec: null });
      return { modelDir: path.join(dataDir, 'm'), commit: 'c'.repeat(40), manifestPath: '', packedDir: null, manifest: {} as never };
    };
    const r = await service(fake, events).prepare({ repo: 'org/name', revision: 'main', token: 'hf_x' });
    expect(r.ok).toBe(true);
    const last = await settled(events);
    expect(seen[0]).toMatchObject({ repo: 'org/name', revision: 'main', token: 'hf_x', hubUrl: 'http://hub', pack: true, dataDir });
    expect(events[1]).toMatchObject({ step: 'download', file: 'model.safetensors', doneBytes: 50, totalBytes: 100, bytesPerSecond: 10, etaSeconds: 5 });
    expect(events[2]).toMatchObject({ step: 'pack', status: 'running' });
    expect(last).toMatchObject({ status: 'done', jobId: r.ok ? r.value.jobId : '' });
  });

  it("hands preparation the shell's packer launcher, and none when the service has none", async () => {
    const launcher = () => {
      throw new Error('not started in this test');
    };
    const seen: Parameters<Prepare>[0][] = [];
    const fake: Prepare = async (opts) => {
      seen.push(opts);
      return { modelDir: path.join(dataDir, 'm'), commit: 'c'.repeat(40), manifestPath: '', packedDir: null, manifest: {} as never };
    };
    const events: PrepareProgress[] = [];
    const withPacker = new ModelsService({ dataDir, hubUrl: 'http://hub', emit: (_n, p) => events.push(p as PrepareProgress), prepare: fake, packer: launcher });
    await withPacker.prepare({ repo: 'o/n', revision: 'main' });
    await settled(events);
    await service(fake, []).prepare({ repo: 'o/n', revision: 'main' });
    expect(seen.map((o) => o.packer)).toEqual([launcher, undefined]);
  });

  it('reports a failure with its code, and a cancel as cancelled', async () => {
    const failing: PrepareProgress[] = [];
    await service(async () => {
      throw new PrepError('HASH_MISMATCH', 'model.safetensors: sha256 differs');
    }, failing).prepare({ repo: 'o/n', revision: 'main' });
    expect(await settled(failing)).toMatchObject({ status: 'failed', error: { code: 'HASH_MISMATCH', message: 'model.safetensors: sha256 differs' } });

    const cancelled: PrepareProgress[] = [];
    const svc = service(
      (opts) =>
        new Promise((_resolve, reject) => opts.signal?.addEventListener('abort', () => reject(new PrepError('CANCELLED', 'cancelled')))),
      cancelled,
    );
    const job = await svc.prepare({ repo: 'o/n', revision: 'main' });
    if (!job.ok) throw new Error(job.error.message);
    expect(await svc.cancel(job.value)).toEqual({ ok: true, value: undefined });
    expect(await settled(cancelled)).toMatchObject({ status: 'cancelled' });
    expect(await svc.cancel(job.value)).toMatchObject({ ok: false, error: { code: 'NOT_FOUND' } });
  });

  it('refuses a second eval-asset download while one runs', async () => {
    const events: PrepareProgress[] = [];
    const svc = service((async () => undefined) as unknown as Prepare, events);
    const first = await svc.downloadAssets({});
    if (!first.ok) throw new Error(first.error.message);
    expect(await svc.downloadAssets({})).toEqual({
      ok: false,
      error: { code: 'BAD_INPUT', message: `the eval assets are already being downloaded (job ${first.value.jobId})` },
    });
    await svc.cancel(first.value);
    expect((await settled(events)).status).not.toBe('running');
  });

  it('lists nothing for an empty data dir and rejects a bad asset import with its code', async () => {
    const svc = service((async () => undefined) as unknown as Prepare, []);
    expect(await svc.list()).toEqual({ ok: true, value: [] });
    const r = await svc.importAssets({ kind: 'ifeval', path: path.join(dataDir, 'missing.jsonl') });
    expect(r.ok).toBe(false);
  });
});
