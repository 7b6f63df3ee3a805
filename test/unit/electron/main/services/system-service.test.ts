import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { SystemService, type SystemServiceOptions } from '../../../../../electron/main/services/system-service.js';

const worker: SystemServiceOptions['worker'] = {
  state: 'ready',
  restart: async () => ({ ok: true, value: undefined }),
  request: (async () => ({ ok: true, value: { label: 'CPU', cudaCompiled: false, devices: [], note: 'no CUDA device', cpuIsa: 'avx2' } })) as never,
};

describe('SystemService CPU row', () => {
  let dataDir: string;
  beforeAll(async () => {
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'horizon-system-cpu-'));
  });
  afterAll(() => rm(dataDir, { recursive: true, force: true }));
  const probing = (answer: unknown): SystemServiceOptions['worker'] => ({ ...worker, request: (async () => answer) as never });
  const cpuLabel = async (answer: unknown) => {
    const info = await new SystemService({ worker: probing(answer), dataDir, hubUrl: 'http://hub', appVersion: '0.1.0' }).check();
    if (!info.ok) throw new Error(info.error.message);
    return info.value.cpuLabel;
  };
  const probe = (cpuIsa: string) => ({ ok: true, value: { label: 'CPU', cudaCompiled: false, devices: [], note: 'x', cpuIsa } });

  it.each([
    ['avx512-vnni', ', AVX512-VNNI)'],
    ['avx-vnni', ', AVX-VNNI)'],
    ['avx2', ', AVX2)'],
    ['scalar', ', scalar kernels)'],
  ])('names the kernel path %s the worker reports', async (isa, ending) => {
    const label = await cpuLabel(probe(isa));
    expect(label.endsWith(` threads${ending}`)).toBe(true);
  });

  it('leaves it out when the worker cannot answer', async () => {
    const label = await cpuLabel({ ok: false, error: { code: 'INTERNAL', message: 'worker gone' } });
    expect(label).toMatch(/ \(\d+ threads\)$/);
  });
});

describe('SystemService file dialogs', () => {
  let dataDir: string;
  beforeAll(async () => {
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'horizon-system-'));
  });
  afterAll(() => rm(dataDir, { recursive: true, force: true }));
  const base = () => ({ worker, dataDir, hubUrl: 'http://hub', appVersion: '0.1.0' });

  it('has none without the desktop shell, and says to type the path', async () => {
    const s = new SystemService(base());
    const info = await s.check();
    expect(info.ok && info.value.nativeDialogs).toBe(false);
    expect(await s.pickPath({ kind: 'file', title: 'Result ZIP' })).toEqual({
      ok: false,
      error: { code: 'BAD_INPUT', message: 'file dialogs exist only in the desktop app; type the path instead' },
    });
  });

  it('passes the request to the shell and returns its choice, null when cancelled', async () => {
    const asked: unknown[] = [];
    const answers = ['/data/input_data.jsonl', null];
    const s = new SystemService({ ...base(), pickPath: async (req) => (asked.push(req), answers.shift() ?? null) });
    const info = await s.check();
    expect(info.ok && info.value.nativeDialogs).toBe(true);
    const req = { kind: 'file', title: 'IFEval input_data.jsonl', filters: [{ name: 'JSON Lines', extensions: ['jsonl'] }] } as const;
    expect(await s.pickPath(req)).toEqual({ ok: true, value: { path: '/data/input_data.jsonl' } });
    expect(await s.pickPath({ kind: 'folder', title: 'Punkt' })).toEqual({ ok: true, value: { path: null } });
    expect(asked).toEqual([req, { kind: 'folder', title: 'Punkt' }]);
  });

  it('reports a failing dialog as an error value', async () => {
    const s = new SystemService({ ...base(), pickPath: async () => Promise.reject(new Error('no window')) });
    expect(await s.pickPath({ kind: 'folder', title: 'x' })).toEqual({ ok: false, error: { code: 'INTERNAL', message: 'file dialog failed: no window' } });
  });
});
