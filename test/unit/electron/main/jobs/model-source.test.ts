import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { readStopTokenIds, resolveModelSource, resolveRuntimeDir } from '../../../../../electron/main/jobs/model-source.js';
import { EOS_ID, writeTinyTokenizer } from '../../worker/tiny-tokenizer.js';
import { FAKE_SHARD, writeFakePack } from '../prep/fake-pack.js';

describe('model source', () => {
  let root: string;
  beforeAll(async () => {
    root = await mkdtemp(path.join(os.tmpdir(), 'horizon-source-'));
    await writeTinyTokenizer(path.join(root, 'ckpt'));
    await writeFakePack(path.join(root, 'ckpt', 'int4-g32'));
    await writeFile(path.join(root, 'ckpt', 'generation_config.json'), JSON.stringify({ eos_token_id: [EOS_ID, 300] }));
    await mkdir(path.join(root, 'empty'));
    // A packed folder on its own, as the packer leaves it: the checkpoint's config and tokenizer, then its manifest.
    await writeTinyTokenizer(path.join(root, 'packed'));
    await writeFakePack(path.join(root, 'packed'));
    await writeTinyTokenizer(path.join(root, 'plain'));
  });
  afterAll(() => rm(root, { recursive: true, force: true }));

  it('reads the stop ids from the tokenizer config, config.json and generation_config.json', async () => {
    expect(await readStopTokenIds(path.join(root, 'ckpt'))).toEqual([EOS_ID, 300]);
    await expect(readStopTokenIds(path.join(root, 'empty'))).rejects.toThrow(/empty: no EOS token id/);
  });

  it('resolves a plain checkpoint folder with its int4-gN folder and a file listing as manifest', async () => {
    const s = await resolveModelSource(path.join(root, 'ckpt'), 'int4');
    expect(s).toMatchObject({ modelId: 'local:ckpt/int4-g32', repo: 'local/ckpt', weights: 'int4', packedDir: path.join(root, 'ckpt', 'int4-g32') });
    const manifest = JSON.parse(s.manifestJson) as { files: { path: string }[] };
    expect(manifest.files.map((f) => f.path)).toContain(`int4-g32/${FAKE_SHARD}`);
    expect(s.manifestSha256).toMatch(/^[0-9a-f]{64}$/);
    expect((await resolveModelSource(path.join(root, 'ckpt'), 'bf16')).packedDir).toBeNull();
  });

  it('runs a packed folder given on its own as INT4, and refuses BF16 from it', async () => {
    const packed = path.join(root, 'packed');
    expect(await resolveModelSource(packed, 'int4')).toMatchObject({ modelDir: packed, packedDir: packed, weights: 'int4', modelId: 'local:packed/packed' });
    await expect(resolveModelSource(packed, 'bf16')).rejects.toThrow(/packed: an INT4 packed folder \(horizon-manifest.json\) holds no BF16 weights/);
  });

  it.each([
    ['ckpt', undefined, 'ckpt/int4-g32', 'int4'],
    ['ckpt', 'int4', 'ckpt/int4-g32', 'int4'],
    ['ckpt', 'bf16', 'ckpt', 'bf16'],
    ['packed', undefined, 'packed', 'int4'],
    ['plain', undefined, 'plain', 'bf16'],
  ] as const)('the runtime loads %s with --weights %s from %s (%s)', async (dir, weights, expectedDir, expectedWeights) => {
    expect(await resolveRuntimeDir(path.join(root, dir), weights)).toEqual({ dir: path.join(root, expectedDir), weights: expectedWeights });
  });

  it.each([
    ['plain', 'int4', /plain: no int4-gN\/ packed folder; pack it first or use --weights bf16/],
    ['packed', 'bf16', /packed: an INT4 packed folder \(horizon-manifest.json\) holds no BF16 weights/],
    ['empty', undefined, /empty: not a model folder/],
  ] as const)('the runtime refuses %s with --weights %s, naming the folder', async (dir, weights, message) => {
    await expect(resolveRuntimeDir(path.join(root, dir), weights)).rejects.toThrow(message);
  });

  it('names the folder when it is not a model', async () => {
    await expect(resolveModelSource(path.join(root, 'empty'), 'bf16')).rejects.toThrow(/empty: not a model folder/);
  });
});
