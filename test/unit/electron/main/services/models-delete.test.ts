import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { ModelsService } from '../../../../../electron/main/services/models-service.js';
import { ServiceError } from '../../../../../electron/main/services/service-result.js';
import { writeTinyTokenizer } from '../../worker/tiny-tokenizer.js';
import { fileList, FAKE_SHARD, writeFakePack, writePreparedManifest } from '../prep/fake-pack.js';

const COMMIT = 'e'.repeat(40);

async function writePrepared(dataDir: string): Promise<string> {
  const modelDir = path.join(dataDir, 'models', 'o--m', COMMIT);
  await writeTinyTokenizer(path.join(modelDir, 'source'));
  await writeFakePack(path.join(modelDir, 'int4-g32'), 32, Buffer.alloc(3000, 1));
  await writePreparedManifest(modelDir, { repo: 'o/m', commit: COMMIT, hubUrl: 'http://hub.local' });
  await writeFile(path.join(modelDir, 'quality-int4-g32.json'), '{}');
  return modelDir;
}

describe('ModelsService: details and delete', () => {
  let dataDir: string;
  let modelDir: string;
  const guarded: string[] = [];
  const svc = (beforeDelete?: (dir: string) => Promise<void>) =>
    new ModelsService({ dataDir, hubUrl: 'http://hub.local', emit: () => undefined, beforeDelete: beforeDelete ?? (async (d) => void guarded.push(d)) });
  beforeEach(async () => {
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'horizon-models-del-'));
    modelDir = await writePrepared(dataDir);
    guarded.length = 0;
  });
  afterEach(() => rm(dataDir, { recursive: true, force: true }));

  it("lists an INT4 variant's files, sizes, scheme and where it is", async () => {
    const r = await svc().details({ modelId: 'o--m@eeeeeee/int4-g32' });
    if (!r.ok) throw new Error(r.error.message);
    const shard = (await readFile(path.join(modelDir, 'int4-g32', FAKE_SHARD))).length;
    expect(r.value).toMatchObject({
      repo: 'o/m', revision: COMMIT, revisionAsked: 'main', weights: 'int4', preparedDir: modelDir, dir: path.join(modelDir, 'int4-g32'),
      packScheme: { format: 'qpacked-v2', codebook: 'hq4nl', groupSize: 32, bitsPerWeight: 4.5 }, hubUrl: 'http://hub.local', problems: [],
    });
    expect(r.value.files.map((f) => f.path)).toEqual(['horizon-manifest.json', FAKE_SHARD]);
    expect(r.value.files.find((f) => f.path === FAKE_SHARD)?.bytes).toBe(shard);
    expect(r.value.totalBytes).toBe(r.value.files.reduce((n, f) => n + f.bytes, 0));
    const bf16 = await svc().details({ modelId: 'o--m@eeeeeee/bf16' });
    expect(bf16.ok && bf16.value).toMatchObject({ weights: 'bf16', packScheme: null, dir: path.join(modelDir, 'source') });
  });

  it('deletes the INT4 pack only: prepared.json stops listing it, the BF16 variant stays ready', async () => {
    const packBytes = (await fileList(path.join(modelDir, 'int4-g32'))).reduce((n, f) => n + f.size, 0);
    const r = await svc().delete({ modelId: 'o--m@eeeeeee/int4-g32', scope: 'variant' });
    expect(r).toEqual({ ok: true, value: { modelId: 'o--m@eeeeeee/int4-g32', deletedDir: path.join(modelDir, 'int4-g32'), freedBytes: packBytes } });
    expect(guarded).toEqual([modelDir]);
    expect(existsSync(path.join(modelDir, 'int4-g32'))).toBe(false);
    expect(existsSync(path.join(modelDir, 'quality-int4-g32.json'))).toBe(false);
    expect(JSON.parse(await readFile(path.join(modelDir, 'prepared.json'), 'utf8'))).toMatchObject({ pack: null });
    const list = await svc().list();
    expect(list.ok && list.value.map((m) => [m.id, m.ready])).toEqual([['o--m@eeeeeee/bf16', true]]);
  });

  it('deletes a whole prepared model, and its repository folder once empty', async () => {
    const r = await svc().delete({ modelId: 'o--m@eeeeeee/bf16', scope: 'model' });
    expect(r.ok && r.value.deletedDir).toBe(modelDir);
    expect(existsSync(path.join(dataDir, 'models', 'o--m'))).toBe(false);
    expect(await svc().list()).toEqual({ ok: true, value: [] });
  });

  it.each([
    ['a BF16 variant alone', 'o--m@eeeeeee/bf16', 'variant', 'BAD_INPUT', /delete the whole model instead/],
    ['an unknown model', 'o--m@0000000/int4-g32', 'model', 'NOT_FOUND', /no prepared model/],
  ] as const)('refuses %s and deletes nothing', async (_what, modelId, scope, code, message) => {
    const r = await svc().delete({ modelId, scope });
    expect(r).toMatchObject({ ok: false, error: { code, message: expect.stringMatching(message) } });
    expect(existsSync(path.join(modelDir, 'int4-g32', FAKE_SHARD))).toBe(true);
  });

  it('refuses while the guard says a run uses the model, deleting nothing', async () => {
    const r = await svc(async () => {
      throw new ServiceError('BAD_INPUT', 'run r1 is using this model; cancel it before deleting the model');
    }).delete({ modelId: 'o--m@eeeeeee/int4-g32', scope: 'model' });
    expect(r).toMatchObject({ ok: false, error: { code: 'BAD_INPUT', message: expect.stringContaining('run r1') } });
    expect(existsSync(path.join(modelDir, 'prepared.json'))).toBe(true);
  });
});
