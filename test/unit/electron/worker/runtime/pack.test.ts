import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm, symlink } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { loadNativeBinding, packNative } from '../../../../../electron/worker/runtime/binding.js';
import { checkpointShards, MANIFEST_NAME, packModel, type PackProgress } from '../../../../../electron/worker/runtime/pack.js';
import { makeTinyModel } from '../../../../../scripts/make-tiny-model.js';

function addonCanPack(): boolean {
  try {
    return typeof (loadNativeBinding() as unknown as { pack?: unknown }).pack === 'function';
  } catch {
    return false;
  }
}

describe('checkpointShards', () => {
  let root: string;
  beforeAll(async () => {
    root = await mkdtemp(path.join(os.tmpdir(), 'horizon-shards-'));
  });
  afterAll(() => rm(root, { recursive: true, force: true }));

  const cases: { name: string; files: Record<string, string>; want: string[] }[] = [
    {
      name: "the index's files, once each, sorted",
      files: { 'model.safetensors.index.json': JSON.stringify({ weight_map: { a: 'm-2.safetensors', b: 'm-1.safetensors', c: 'm-2.safetensors' } }), 'model.safetensors': '' },
      want: ['m-1.safetensors', 'm-2.safetensors'],
    },
    {
      name: 'not a path outside the folder',
      files: { 'model.safetensors.index.json': JSON.stringify({ weight_map: { a: '../x.safetensors', b: 'sub\\y.safetensors', c: 7, d: 'z.safetensors' } }) },
      want: ['z.safetensors'],
    },
    { name: 'model.safetensors without an index', files: { 'model.safetensors': '' }, want: ['model.safetensors'] },
    { name: 'model.safetensors when the index is not JSON', files: { 'model.safetensors.index.json': '{', 'model.safetensors': '' }, want: ['model.safetensors'] },
    { name: 'nothing in an empty folder', files: {}, want: [] },
  ];
  it.each(cases)('$name', ({ name, files, want }) => {
    const dir = path.join(root, name.replace(/\W+/g, '-'));
    mkdirSync(dir);
    for (const [f, text] of Object.entries(files)) writeFileSync(path.join(dir, f), text);
    expect(checkpointShards(dir)).toEqual(want);
  });
});

describe('packModel', () => {
  let root: string;
  beforeAll(async () => {
    root = await mkdtemp(path.join(os.tmpdir(), 'horizon-pack-'));
  });
  afterAll(() => rm(root, { recursive: true, force: true }));

  it('refuses to write into the checkpoint folder itself, however it is named, before touching it', async () => {
    const src = path.join(root, 'ckpt');
    await makeTinyModel(src, { seed: 1 });
    await symlink(src, path.join(root, 'link-to-ckpt'));
    const before = readdirSync(src).sort();
    for (const dst of [src, `${src}/`, path.join(root, 'link-to-ckpt')]) {
      await expect(packModel({ src, dst })).rejects.toThrow(`pack: the output folder ${dst} is the checkpoint folder itself`);
    }
    expect(readdirSync(src).sort()).toEqual(before);
  });

  it.skipIf(!addonCanPack())('removes the shards of an earlier pack with another shard count, and only those', async () => {
    const src = path.join(root, 'src');
    const dst = path.join(root, 'int4-g32');
    await makeTinyModel(src, { seed: 2 });
    await packModel({ src, dst });
    const stale = ['model-qpacked-00007-of-00009.safetensors', 'model-qpacked-00009-of-00009.safetensors.tmp'];
    const kept = ['notes.txt', 'model-qpacked-7-of-9.safetensors'];
    for (const name of [...stale, ...kept]) writeFileSync(path.join(dst, name), 'x');
    const manifest = await packModel({ src, dst, repo: 'o/m', revision: 'abc' });
    for (const name of stale) expect(existsSync(path.join(dst, name)), name).toBe(false);
    for (const name of kept) expect(existsSync(path.join(dst, name)), name).toBe(true);
    for (const f of manifest.outputs) expect(existsSync(path.join(dst, f.path)), f.path).toBe(true);
    expect(manifest.source).toMatchObject({ repo: 'o/m', revision: 'abc' });
    expect(existsSync(path.join(dst, MANIFEST_NAME))).toBe(true);
  });

  it.skipIf(!addonCanPack())('hashes the shards while packing and still reports every hashed byte once, in order', async () => {
    const src = path.join(root, 'early');
    const dst = path.join(root, 'early-int4');
    await makeTinyModel(src, { seed: 3 });
    expect(checkpointShards(src).length).toBeGreaterThan(1);
    const events: PackProgress[] = [];
    const manifest = await packModel({ src, dst, onProgress: (p) => events.push(p) });
    const sha = (f: string) => createHash('sha256').update(readFileSync(f)).digest('hex');
    for (const f of manifest.source.files) expect(f.sha256, f.path).toBe(sha(path.join(src, f.path)));
    for (const f of manifest.outputs) expect(f.sha256, f.path).toBe(sha(path.join(dst, f.path)));
    const hashes = events.filter((e) => e.phase === 'hash');
    // Every pack event comes before the first hash event: the early hashing does not report while the packer runs.
    expect(events.findIndex((e) => e.phase === 'hash')).toBe(events.length - hashes.length);
    const total = [...manifest.source.files, ...manifest.outputs].reduce((a, f) => a + f.size, 0);
    for (const [i, e] of hashes.entries()) {
      expect(e.totalBytes).toBe(total);
      if (i > 0) expect(e.doneBytes).toBeGreaterThanOrEqual(hashes[i - 1]!.doneBytes);
    }
    expect(hashes.at(-1)!.doneBytes).toBe(total);
  });

  it.skipIf(!addonCanPack())('gets each output shard from the packer once it is in place, in order', async () => {
    const src = path.join(root, 'reported');
    const dst = path.join(root, 'reported-int4');
    await makeTinyModel(src, { seed: 5 });
    const reported: { name: string; there: boolean; temp: boolean }[] = [];
    const packed = await packNative({ src, dst, shardBytes: 20_000 }, undefined, undefined, (name) =>
      reported.push({ name, there: existsSync(path.join(dst, name)), temp: existsSync(path.join(dst, `${name}.tmp`)) }),
    );
    const shards = packed.outputFiles.filter((f) => f.startsWith('model-qpacked-'));
    expect(shards.length).toBeGreaterThan(1);
    expect(reported.map((r) => r.name)).toEqual(shards);
    for (const r of reported) expect(r, r.name).toMatchObject({ there: true, temp: false });
  });

  it.skipIf(!addonCanPack())('stops hashing and rejects with the packer\'s error when the packer fails', async () => {
    const src = path.join(root, 'bad');
    await makeTinyModel(src, { seed: 4 });
    writeFileSync(path.join(src, 'config.json'), '{');
    const events: PackProgress[] = [];
    await expect(packModel({ src, dst: path.join(root, 'bad-int4'), onProgress: (p) => events.push(p) })).rejects.toThrow(/config\.json/);
    expect(events.filter((e) => e.phase === 'hash')).toEqual([]);
  });
});
