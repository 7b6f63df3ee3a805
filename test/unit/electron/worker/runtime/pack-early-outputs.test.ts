/**
 * packModel over a stand-in packer that reports its output shards as it finishes them: each is hashed while the
 * packer goes on, once, and the manifest holds the digests of the files as they end up.
 */
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';

import type * as FileHasherModule from '../../../../../electron/node/file-hasher.js';
import type { NativePackOptions, NativePackResult } from '../../../../../electron/worker/runtime/binding.js';

const seen = vi.hoisted(() => ({
  /** What happened, in order: `hash <file>` when a hash starts, `packed` when the packer resolves. */
  log: [] as string[],
  /** Resolves the wait of the stand-in packer for a file's hash to finish. */
  waiters: new Map<string, () => void>(),
  /** The stand-in packer, set by each test. */
  packer: null as null | ((options: NativePackOptions, onShard: (name: string) => void) => Promise<NativePackResult>),
}));

vi.mock('../../../../../electron/node/file-hasher.js', async (importOriginal) => {
  const real = await importOriginal<typeof FileHasherModule>();
  return {
    ...real,
    hashFile: async (file: string, opts?: Parameters<typeof real.hashFile>[1]) => {
      seen.log.push(`hash ${path.basename(file)}`);
      const digest = await real.hashFile(file, opts);
      seen.waiters.get(file)?.();
      return digest;
    },
  };
});

vi.mock('../../../../../electron/worker/runtime/binding.js', () => ({
  packNative: async (options: NativePackOptions, _onProgress: unknown, _signal: unknown, onShard: (name: string) => void) => {
    const result = await seen.packer!(options, onShard);
    seen.log.push('packed');
    return result;
  },
}));

const { packModel } = await import('../../../../../electron/worker/runtime/pack.js');

const sha = (f: string) => createHash('sha256').update(readFileSync(f)).digest('hex');
const SHARDS = ['model-qpacked-00001-of-00002.safetensors', 'model-qpacked-00002-of-00002.safetensors'];

/** Resolves once a hash of `file` has finished, or after `ms` (so that a missing early hash fails the test, not hangs it). */
function hashed(file: string, ms = 30_000): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    seen.waiters.set(file, () => {
      clearTimeout(timer);
      resolve();
    });
  });
}

describe('packModel: output shards hashed while the packer runs', () => {
  let root: string;
  let src: string;
  beforeAll(async () => {
    root = await mkdtemp(path.join(os.tmpdir(), 'horizon-pack-early-'));
    src = path.join(root, 'src');
    mkdirSync(src);
    writeFileSync(path.join(src, 'config.json'), '{"model_type":"olmoe"}');
    writeFileSync(path.join(src, 'model.safetensors'), Buffer.alloc(300_000, 7));
  });
  afterAll(() => rm(root, { recursive: true, force: true }));
  beforeEach(() => {
    seen.log.length = 0;
    seen.waiters.clear();
  });

  const result = (outputs: string[]): NativePackResult => ({
    groupSize: 32,
    sourceFiles: ['model.safetensors', 'config.json'],
    outputFiles: [...outputs, 'config.json'],
    sourceBytes: 300_000,
  });

  it('hashes a reported shard before the packer is done, each file once, with the final bytes', async () => {
    const dst = path.join(root, 'int4');
    seen.packer = async (options, onShard) => {
      mkdirSync(options.dst, { recursive: true });
      writeFileSync(path.join(options.dst, SHARDS[0]!), Buffer.alloc(200_000, 1));
      const first = hashed(path.join(options.dst, SHARDS[0]!));
      onShard(SHARDS[0]!);
      await first;
      writeFileSync(path.join(options.dst, SHARDS[1]!), Buffer.alloc(50_000, 2));
      onShard(SHARDS[1]!);
      writeFileSync(path.join(options.dst, 'config.json'), '{"model_type":"olmoe"}');
      return result(SHARDS);
    };
    const manifest = await packModel({ src, dst });
    expect(seen.log.indexOf(`hash ${SHARDS[0]}`)).toBeGreaterThanOrEqual(0);
    expect(seen.log.indexOf(`hash ${SHARDS[0]}`)).toBeLessThan(seen.log.indexOf('packed'));
    for (const name of [...SHARDS, 'model.safetensors']) expect(seen.log.filter((l) => l === `hash ${name}`), name).toHaveLength(1);
    for (const f of manifest.outputs) expect(f.sha256, f.path).toBe(sha(path.join(dst, f.path)));
    for (const f of manifest.source.files) expect(f.sha256, f.path).toBe(sha(path.join(src, f.path)));
  });

  it('hashes a shard again when its size changed after it was reported', async () => {
    const dst = path.join(root, 'int4-rewritten');
    seen.packer = async (options, onShard) => {
      mkdirSync(options.dst, { recursive: true });
      const shard = path.join(options.dst, SHARDS[0]!);
      writeFileSync(shard, Buffer.alloc(100_000, 1));
      const first = hashed(shard);
      onShard(SHARDS[0]!);
      await first;
      writeFileSync(shard, Buffer.alloc(120_000, 3));
      writeFileSync(path.join(options.dst, 'config.json'), '{}');
      return result([SHARDS[0]!]);
    };
    const manifest = await packModel({ src, dst });
    const out = manifest.outputs.find((f) => f.path === SHARDS[0])!;
    expect(out).toMatchObject({ size: 120_000, sha256: sha(path.join(dst, SHARDS[0]!)) });
    expect(seen.log.filter((l) => l === `hash ${SHARDS[0]}`)).toHaveLength(2);
  });
});
