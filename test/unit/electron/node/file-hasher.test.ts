import { createHash } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { FileHasher, hashFile } from '../../../../electron/node/file-hasher.js';

const sha256 = (b: Uint8Array | string) => createHash('sha256').update(b).digest('hex');
/** What `git hash-object` gives for these bytes. */
const gitBlobSha1 = (b: Uint8Array) => createHash('sha1').update(`blob ${b.length}\0`).update(b).digest('hex');

describe('FileHasher / hashFile', () => {
  let dir: string;
  let file: string;
  // More than one 1 MiB read, so that bytes are reported chunk by chunk.
  const bytes = Uint8Array.from({ length: 3 * 2 ** 20 + 5 }, (_, i) => (i * 7) % 251);

  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'horizon-hasher-'));
    file = path.join(dir, 'blob.bin');
    await writeFile(file, bytes);
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it('gives the sha256 and size of a whole file, and the git blob sha1 when asked', async () => {
    expect(await hashFile(file)).toEqual({ sha256: sha256(bytes), size: bytes.length });
    expect(await hashFile(file, { git: true })).toEqual({ sha256: sha256(bytes), size: bytes.length, gitSha1: gitBlobSha1(bytes) });
  });

  it("matches git's id of a known blob", () => {
    const h = new FileHasher(12);
    h.update(Buffer.from('hello world\n'));
    // `echo 'hello world' | git hash-object --stdin`
    expect(h.digest().gitSha1).toBe('3b18e512dba79e4c8300dd08aeb37f8e728b8dad');
  });

  it('reports every byte read', async () => {
    const reported: number[] = [];
    await hashFile(file, { onBytes: (n) => reported.push(n) });
    expect(reported.length).toBeGreaterThan(1);
    expect(reported.reduce((a, b) => a + b, 0)).toBe(bytes.length);
  });

  it('feeds only the first bytes when given a length, and nothing for 0', async () => {
    const h = new FileHasher();
    await h.updateFromFile(file, 10);
    expect(h.digest()).toEqual({ sha256: sha256(bytes.subarray(0, 10)), size: 10 });
    const empty = new FileHasher();
    const reported: number[] = [];
    await empty.updateFromFile(file, 0, (n) => reported.push(n));
    expect(empty.digest()).toEqual({ sha256: sha256(''), size: 0 });
    expect(reported).toEqual([]);
  });

  it('stops with the abort reason when the signal is aborted', async () => {
    const controller = new AbortController();
    const reason = new Error('stopped by the test');
    controller.abort(reason);
    await expect(hashFile(file, { signal: controller.signal })).rejects.toBe(reason);
    const bare = new AbortController();
    bare.abort('not an error');
    await expect(hashFile(file, { signal: bare.signal })).rejects.toMatchObject({ name: 'AbortError' });
  });
});
