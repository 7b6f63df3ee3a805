import { createHash } from 'node:crypto';
import { mkdtemp, readFile, rm, stat, truncate, utimes, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { checkRecordedModel, resolveModelSource, resolveRuntimeDir } from '../../../../../electron/main/jobs/model-source.js';
import { checkPreparedModel, rememberVerified, VERIFIED_RECORD } from '../../../../../electron/main/prep/model-integrity.js';
import { readPreparedManifest } from '../../../../../electron/main/prep/prepared-manifest.js';
import { writeTinyTokenizer } from '../../worker/tiny-tokenizer.js';
import { FAKE_SHARD, writeFakePack, writePreparedManifest } from './fake-pack.js';

const COMMIT = 'a'.repeat(40);
const WHOLE_SECOND = 1_700_000_000;

/** A prepared model as preparation leaves it, verified.json included. */
async function writePrepared(modelDir: string): Promise<void> {
  await writeTinyTokenizer(path.join(modelDir, 'source'));
  await writeFakePack(path.join(modelDir, 'int4-g32'), 32, Buffer.alloc(4096, 7));
  // A whole second: an mtime that a restore through utimes (seconds as a double) gives back exactly.
  await utimes(path.join(modelDir, 'int4-g32', FAKE_SHARD), WHOLE_SECOND, WHOLE_SECOND);
  await writePreparedManifest(modelDir, { repo: 'horizon/tiny', commit: COMMIT });
  // Written 10 s after the shard's whole second: "changed after prepared.json" is then definite on any filesystem.
  await utimes(path.join(modelDir, 'prepared.json'), WHOLE_SECOND + 10, WHOLE_SECOND + 10);
  await rememberVerified(modelDir, await readPreparedManifest(modelDir));
}

/** Flips one byte in place; keeps the mtime when asked (a change that size + mtime cannot see). */
async function flipByte(file: string, at: number, keepMtime = false): Promise<void> {
  const before = await stat(file);
  const b = await readFile(file);
  b[at] = b[at]! ^ 0xff;
  await writeFile(file, b);
  if (keepMtime) await utimes(file, before.atime, before.mtime);
}

describe('model integrity before a load', () => {
  let root: string;
  let model: string;
  let shard: string;
  beforeEach(async () => {
    root = await mkdtemp(path.join(os.tmpdir(), 'horizon-integrity-'));
    model = path.join(root, 'prepared');
    shard = path.join(model, 'int4-g32', FAKE_SHARD);
    await writePrepared(model);
  });
  afterEach(() => rm(root, { recursive: true, force: true }));

  it('loads an untouched model without hashing it again: a same-size, same-mtime change goes unseen until --verify', async () => {
    await expect(resolveModelSource(model, 'int4')).resolves.toMatchObject({ packedDir: path.join(model, 'int4-g32') });
    await flipByte(shard, 100, true);
    // Not re-hashed: size and mtime match the record, so the flipped byte is not read.
    await expect(resolveRuntimeDir(model, 'int4')).resolves.toEqual({ dir: path.join(model, 'int4-g32'), weights: 'int4' });
    await expect(resolveRuntimeDir(model, 'int4', { verify: true })).rejects.toThrow(
      new RegExp(`prepared: its contents changed since it was prepared.*\\n  - int4-g32/${FAKE_SHARD}: sha256 [0-9a-f]{64}, prepared.json records`, 's'),
    );
  });

  it('refuses a flipped byte in a packed shard (its mtime moved), naming the file', async () => {
    await flipByte(shard, 0);
    await expect(resolveModelSource(model, 'int4')).rejects.toThrow(new RegExp(`int4-g32/${FAKE_SHARD}: sha256`));
    // Refused every time, not only the first: a mismatch is never remembered as verified.
    await expect(resolveRuntimeDir(model, 'bf16')).rejects.toThrow(/contents changed since it was prepared/);
  });

  it('refuses a changed source file, and accepts it again once restored', async () => {
    const config = path.join(model, 'source', 'config.json');
    const original = await readFile(config);
    await writeFile(config, original.toString().replace('{', '{ '));
    await expect(resolveRuntimeDir(model)).rejects.toThrow(/source\/config.json: \d+ bytes, expected \d+/);
    await writeFile(config, original);
    await expect(resolveRuntimeDir(model)).resolves.toMatchObject({ weights: 'int4' });
  });

  it('refuses a missing or truncated file', async () => {
    await truncate(shard, 10);
    await expect(checkPreparedModel(model)).rejects.toThrow(new RegExp(`int4-g32/${FAKE_SHARD}: 10 bytes, expected 4096`));
    await rm(shard);
    await expect(checkPreparedModel(model)).rejects.toThrow(new RegExp(`int4-g32/${FAKE_SHARD}: missing`));
  });

  it.each([
    ['not JSON', '{"format": ', /horizon-manifest.json: not valid JSON/],
    ['another format', JSON.stringify({ format: 'qpacked-v1', group_size: 32, codebook: 'hq4nl', outputs: [] }), /format "qpacked-v1", expected "qpacked-v2" \(pack it again\)/],
    ['another codebook', JSON.stringify({ format: 'qpacked-v2', group_size: 32, codebook: 'uniform', outputs: [] }), /codebook "uniform", expected "hq4nl"/],
    ['another group size', JSON.stringify({ format: 'qpacked-v2', group_size: 64, codebook: 'hq4nl', outputs: [] }), /group_size 64, but prepared.json records 32/],
    ['no outputs', JSON.stringify({ format: 'qpacked-v2', group_size: 32, codebook: 'hq4nl', outputs: [] }), /outputs is not a list/],
  ])('refuses a horizon-manifest.json that is %s, naming it', async (_what, text, message) => {
    // Written at the recorded size: only the structure check can tell, not the size check.
    const file = path.join(model, 'int4-g32', 'horizon-manifest.json');
    const size = (await stat(file)).size;
    await writeFile(file, text.padEnd(size, ' ').slice(0, Math.max(size, text.length)));
    if (text.length <= size) await expect(checkPreparedModel(model)).rejects.toThrow(message);
    else await expect(checkPreparedModel(model)).rejects.toThrow(/horizon-manifest.json: \d+ bytes, expected/);
  });

  it('refuses a horizon-manifest.json that lists other contents than prepared.json', async () => {
    const file = path.join(model, 'int4-g32', 'horizon-manifest.json');
    const m = JSON.parse(await readFile(file, 'utf8')) as { outputs: { sha256: string }[] };
    m.outputs[0]!.sha256 = 'b'.repeat(64);
    await writeFile(file, JSON.stringify(m));
    await expect(checkPreparedModel(model)).rejects.toThrow(new RegExp(`${FAKE_SHARD}: horizon-manifest.json and prepared.json record different contents`));
  });

  it('refuses an invalid prepared.json, naming it', async () => {
    await writeFile(path.join(model, 'prepared.json'), '{"format": "horizon-prepared-v1"}');
    await expect(resolveModelSource(model, 'int4')).rejects.toThrow(/prepared.json: not a horizon-prepared-v1 manifest/);
  });

  it('without a record (lost, damaged, or a model prepared before it existed) hashes the files changed after prepared.json', async () => {
    await writeFile(path.join(model, VERIFIED_RECORD), 'garbage');
    // Changed after prepared.json was written (its mtime moves past it): hashed, and refused.
    await flipByte(shard, 5);
    await expect(checkPreparedModel(model)).rejects.toThrow(new RegExp(`int4-g32/${FAKE_SHARD}: sha256`));
    await flipByte(shard, 5);
    await rm(path.join(model, VERIFIED_RECORD));
    // Restored: hashed again (still newer than prepared.json), found right, recorded.
    await checkPreparedModel(model);
    const record = JSON.parse(await readFile(path.join(model, VERIFIED_RECORD), 'utf8')) as { files: Record<string, { sha256: string }> };
    const expected = createHash('sha256').update(await readFile(shard)).digest('hex');
    expect(record.files[`int4-g32/${FAKE_SHARD}`]?.sha256).toBe(expected);
    expect(Object.keys(record.files)).toContain('source/config.json');
  });

  it('without a record, takes a file untouched since prepared.json was written as verified then (no 13.8 GB re-hash)', async () => {
    await rm(path.join(model, VERIFIED_RECORD));
    // Same size, mtime kept at its old whole second, older than prepared.json: not read, so the flip goes unseen...
    await flipByte(shard, 7, true);
    await expect(checkPreparedModel(model)).resolves.toMatchObject({ repo: 'horizon/tiny' });
    // ...until --verify, which reads every file.
    await expect(checkPreparedModel(model, { verify: true })).rejects.toThrow(/contents changed/);
  });

  it('refuses to resume a run whose model was prepared again or changed', async () => {
    const source = await resolveModelSource(model, 'int4');
    await expect(checkRecordedModel(source)).resolves.toBeUndefined();
    const manifest = path.join(model, 'prepared.json');
    await writeFile(manifest, (await readFile(manifest, 'utf8')).replace('2026-01-01', '2026-02-02'));
    await expect(checkRecordedModel(source)).rejects.toThrow(/prepared.json: changed since this run started/);
  });
});

describe('a packed folder loaded on its own', () => {
  let root: string;
  let packed: string;
  beforeEach(async () => {
    root = await mkdtemp(path.join(os.tmpdir(), 'horizon-integrity-'));
    packed = path.join(root, 'int4-g32');
    await writeTinyTokenizer(packed);
    await writeFakePack(packed, 32, Buffer.alloc(1024, 3));
  });
  afterEach(() => rm(root, { recursive: true, force: true }));

  it('checks sizes on every load, hashes with --verify, and always when a run records its listing', async () => {
    const shard = path.join(packed, FAKE_SHARD);
    await flipByte(shard, 1);
    await expect(resolveRuntimeDir(packed)).resolves.toEqual({ dir: packed, weights: 'int4' });
    await expect(resolveRuntimeDir(packed, 'int4', { verify: true })).rejects.toThrow(new RegExp(`${FAKE_SHARD}: sha256 [0-9a-f]{64}, horizon-manifest.json records`));
    await expect(resolveModelSource(packed, 'int4')).rejects.toThrow(/its files do not match horizon-manifest.json \(pack it again\)/);
    await truncate(shard, 1000);
    await expect(resolveRuntimeDir(packed)).rejects.toThrow(new RegExp(`${FAKE_SHARD}: 1000 bytes, horizon-manifest.json records 1024`));
  });

  it('refuses an int4-gN folder inside a checkpoint that the packer did not finish', async () => {
    const ckpt = path.join(root, 'ckpt');
    await writeTinyTokenizer(ckpt);
    await writeFakePack(path.join(ckpt, 'int4-g32'));
    await rm(path.join(ckpt, 'int4-g32', 'horizon-manifest.json'));
    await expect(resolveRuntimeDir(ckpt, 'int4')).rejects.toThrow(/int4-g32\/horizon-manifest.json: missing \(an unfinished pack: pack it again\)/);
  });
});
