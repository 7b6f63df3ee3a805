import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

import { PassThrough } from 'node:stream';

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
      opts.onEvent?.({ type: 'progress', phase: 'download', file: 'b', files: ['a', 'b'], doneBytes: 60, totalBytes: 100, bytesPerSec: 10, etaSec: 4 });
      return { modelDir: path.join(dataDir, 'm'), commit: 'c'.repeat(40), manifestPath: '', packedDir: null, manifest: {} as never };
    };
    const r = await service(fake, events).prepare({ repo: 'org/name', revision: 'main', token: 'hf_x' });
    expect(r.ok).toBe(true);
    const last = await settled(events);
    expect(seen[0]).toMatchObject({ repo: 'org/name', revision: 'main', token: 'hf_x', hubUrl: 'http://hub', pack: true, dataDir });
    expect(events[1]).toMatchObject({ step: 'download', file: 'model.safetensors', doneBytes: 50, totalBytes: 100, bytesPerSecond: 10, etaSeconds: 5 });
    expect(events[2]).toMatchObject({ step: 'pack', status: 'running' });
    expect(events[3]).toMatchObject({ step: 'download', file: 'a, b', message: 'download a, b', doneBytes: 60 });
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

describe('ModelsService.checkQuality', () => {
  let dataDir: string;
  const COMMIT = 'd'.repeat(40);
  const files = async (dir: string) => {
    const { createHash } = await import('node:crypto');
    const { readdir, readFile } = await import('node:fs/promises');
    const out = [];
    for (const name of (await readdir(dir)).sort()) {
      const b = await readFile(path.join(dir, name));
      out.push({ path: name, size: b.length, sha256: createHash('sha256').update(b).digest('hex') });
    }
    return out;
  };
  beforeAll(async () => {
    const { mkdir, writeFile } = await import('node:fs/promises');
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'horizon-quality-svc-'));
    const modelDir = path.join(dataDir, 'models', 'o--m', COMMIT);
    await mkdir(path.join(modelDir, 'source'), { recursive: true });
    await mkdir(path.join(modelDir, 'int4-g32'), { recursive: true });
    await writeFile(path.join(modelDir, 'source', 'config.json'), '{}');
    await writeFile(path.join(modelDir, 'int4-g32', 'model.qpacked'), 'packed');
    await writeFile(
      path.join(modelDir, 'prepared.json'),
      JSON.stringify({
        format: 'horizon-prepared-v1', repo: 'o/m', revision: 'main', commit: COMMIT, hubUrl: 'http://localhost',
        source: { dir: 'source', files: await files(path.join(modelDir, 'source')) },
        pack: { dir: 'int4-g32', format: 'qpacked-v2', groupSize: 32, files: await files(path.join(modelDir, 'int4-g32')) },
        tool: 'horizon-runmap', toolVersion: '0.1.0', createdAt: '2026-01-01T00:00:00.000Z',
      }),
    );
  });
  afterAll(() => rm(dataDir, { recursive: true, force: true }));

  /** A launcher standing in for `horizon quality --progress-json`: prints `lines`, `stderr`, then exits with `code`. */
  const launcher = (lines: string[], code: number, stderr = '', seen: string[][] = []) => (args: readonly string[]) => {
    seen.push([...args]);
    const out = new PassThrough();
    const err = new PassThrough();
    let close: ((c: number | null, s: string | null) => void) | undefined;
    setTimeout(() => {
      for (const l of lines) out.write(`${l}\n`);
      err.end(stderr);
      out.end();
      setTimeout(() => close?.(code, null), 5);
    }, 5);
    return { stdout: out, stderr: err, onClose: (h: typeof close) => void (close = h), onError: () => undefined, kill: () => undefined };
  };
  const int4Id = `o--m@${COMMIT.slice(0, 7)}/int4-g32`;
  const run = async (l: ReturnType<typeof launcher>, modelId = int4Id) => {
    const events: PrepareProgress[] = [];
    const svc = new ModelsService({ dataDir, hubUrl: 'http://hub', emit: (_n, p) => events.push(p as PrepareProgress), packer: l });
    const r = await svc.checkQuality({ modelId, limit: 2 });
    for (let i = 0; i < 200 && r.ok && !events.some((e) => e.status !== 'running'); i++) await new Promise((res) => setTimeout(res, 5));
    return { r, events };
  };

  it('runs horizon quality on the prepared folder and relays its progress, then done with the model', async () => {
    const seen: string[][] = [];
    const { r, events } = await run(
      launcher(
        [
          JSON.stringify({ type: 'progress', done: 0, total: 2, elapsedMs: 0, etaMs: null }),
          JSON.stringify({ type: 'progress', done: 1, total: 2, elapsedMs: 1000, etaMs: 1500 }),
          'not json',
          JSON.stringify({ type: 'done', file: 'x' }),
        ],
        0,
        '',
        seen,
      ),
    );
    expect(r.ok).toBe(true);
    expect(seen[0]).toEqual(['quality', '--model', path.join(dataDir, 'models', 'o--m', COMMIT), '--limit', '2', '--data-dir', dataDir, '--progress-json']);
    expect(events.map((e) => [e.step, e.status, e.doneBytes, e.totalBytes])).toEqual([
      ['quality', 'running', 0, 2],
      ['quality', 'running', 0, 2],
      ['quality', 'running', 1, 2],
      ['quality', 'done', 2, 2],
    ]);
    expect(events[2]).toMatchObject({ etaSeconds: 2, message: 'quality check: 1 of 2 prompts' });
    expect(events.at(-1)).toMatchObject({ modelId: int4Id });
  });

  it('fails with the CLI error line when it exits non-zero or never says done', async () => {
    const failed = await run(launcher([], 1, 'quality: 0/2 prompts\nhorizon quality: /x: cannot read the IFEval prompts\n'));
    expect(failed.events.at(-1)).toMatchObject({ status: 'failed', error: { message: expect.stringMatching(/failed \(exit 1\): \/x: cannot read the IFEval prompts$/) } });
    const silent = await run(launcher([], 0));
    expect(silent.events.at(-1)).toMatchObject({ status: 'failed' });
  });

  it('refuses a BF16 model and an unknown one', async () => {
    const bf16 = await run(launcher([], 0), `o--m@${COMMIT.slice(0, 7)}/bf16`);
    expect(bf16.r).toMatchObject({ ok: false, error: { code: 'BAD_INPUT', message: expect.stringContaining('not an INT4 model') } });
    const none = await run(launcher([], 0), 'nope/int4-g32');
    expect(none.r).toMatchObject({ ok: false, error: { code: 'NOT_FOUND' } });
  });
});
