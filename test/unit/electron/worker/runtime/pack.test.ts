import { existsSync, readdirSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm, symlink } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { loadNativeBinding } from '../../../../../electron/worker/runtime/binding.js';
import { MANIFEST_NAME, packModel } from '../../../../../electron/worker/runtime/pack.js';
import { makeTinyModel } from '../../../../../scripts/make-tiny-model.js';

function addonCanPack(): boolean {
  try {
    return typeof (loadNativeBinding() as unknown as { pack?: unknown }).pack === 'function';
  } catch {
    return false;
  }
}

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
});
