import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';

import { downloadFile } from '../../../../../electron/main/prep/download-file.js';
import { toPrepError, type PrepError } from '../../../../../electron/main/prep/prep-error.js';
import { partHolds, startHubServer, type HubServer } from '../../../../fixtures/hub-server.js';
import { removeTempDirs, tempDir } from './test-repo.js';

const BLOB = Buffer.from(Array.from({ length: 300_000 }, (_, i) => (i * 31 + 7) & 0xff));
const SHA = createHash('sha256').update(BLOB).digest('hex');
const GIT = createHash('sha1').update(`blob ${BLOB.length}\0`).update(BLOB).digest('hex');

let hub: HubServer;
const url = (): string => `${hub.url}/blob.bin`;
const requestsFor = (): { range?: string }[] => hub.requests.filter((r) => r.url === '/blob.bin');

beforeAll(async () => {
  hub = await startHubServer({ repos: {}, assets: { '/blob.bin': { bytes: BLOB } } });
});
afterAll(async () => {
  removeTempDirs();
  await hub.close();
});

describe('downloadFile', () => {
  it('resumes from a .part whose sidecar matches, and checks the git blob sha1', async () => {
    const dest = path.join(tempDir('dl'), 'blob.bin');
    fs.writeFileSync(`${dest}.part`, BLOB.subarray(0, 123_456));
    fs.writeFileSync(`${dest}.part.json`, JSON.stringify({ url: url(), size: BLOB.length, sha256: null, gitSha1: GIT, etag: null }));
    const digest = await downloadFile({ url: url(), dest, label: 'blob.bin', expected: { size: BLOB.length, gitSha1: GIT } });
    expect(requestsFor().at(-1)?.range).toBe('bytes=123456-');
    expect(digest).toMatchObject({ sha256: SHA, gitSha1: GIT, size: BLOB.length });
    expect(fs.readFileSync(dest).equals(BLOB)).toBe(true);
    expect(fs.existsSync(`${dest}.part`) || fs.existsSync(`${dest}.part.json`)).toBe(false);
  });

  it('discards a .part recorded for a different file', async () => {
    const dest = path.join(tempDir('dl'), 'blob.bin');
    fs.writeFileSync(`${dest}.part`, Buffer.alloc(5000, 1));
    fs.writeFileSync(`${dest}.part.json`, JSON.stringify({ url: url(), size: BLOB.length, sha256: '0'.repeat(64), gitSha1: null, etag: null }));
    await downloadFile({ url: url(), dest, label: 'blob.bin', expected: { size: BLOB.length, sha256: SHA } });
    expect(requestsFor().at(-1)?.range).toBeUndefined();
    expect(fs.readFileSync(dest).equals(BLOB)).toBe(true);
  });

  it.each<[string, (u: string) => Record<string, unknown>, { size: number; sha256?: string }]>([
    ['size', (u) => ({ url: u, size: BLOB.length + 1, sha256: SHA, gitSha1: null }), { size: BLOB.length, sha256: SHA }],
    ['git sha1', (u) => ({ url: u, size: BLOB.length, sha256: SHA, gitSha1: '0'.repeat(40) }), { size: BLOB.length, sha256: SHA }],
    ['URL, for a file without a pinned hash', (u) => ({ url: `${u}?old`, size: BLOB.length, sha256: null, gitSha1: null }), { size: BLOB.length }],
  ])('discards a .part whose sidecar records another %s', async (_what, sidecar, expected) => {
    const dest = path.join(tempDir('dl'), 'blob.bin');
    fs.writeFileSync(`${dest}.part`, Buffer.alloc(5000, 1));
    fs.writeFileSync(`${dest}.part.json`, JSON.stringify({ ...sidecar(url()), etag: null }));
    await downloadFile({ url: url(), dest, label: 'blob.bin', expected });
    expect(requestsFor().at(-1)?.range).toBeUndefined();
    expect(fs.readFileSync(dest).equals(BLOB)).toBe(true);
  });

  it('resumes a .part of a pinned file from another URL (a mirror), and takes a complete one without a request', async () => {
    const dest = path.join(tempDir('dl'), 'blob.bin');
    fs.writeFileSync(`${dest}.part`, BLOB.subarray(0, 1000));
    fs.writeFileSync(`${dest}.part.json`, JSON.stringify({ url: `${url()}?mirror`, size: BLOB.length, sha256: SHA, gitSha1: null, etag: null }));
    await downloadFile({ url: url(), dest, label: 'blob.bin', expected: { size: BLOB.length, sha256: SHA } });
    expect(requestsFor().at(-1)?.range).toBe('bytes=1000-');
    expect(fs.readFileSync(dest).equals(BLOB)).toBe(true);

    const whole = path.join(tempDir('dl'), 'blob.bin');
    fs.writeFileSync(`${whole}.part`, BLOB);
    fs.writeFileSync(`${whole}.part.json`, JSON.stringify({ url: url(), size: BLOB.length, sha256: SHA, gitSha1: null, etag: null }));
    const before = requestsFor().length;
    expect(await downloadFile({ url: url(), dest: whole, label: 'blob.bin', expected: { size: BLOB.length, sha256: SHA } })).toMatchObject({ sha256: SHA });
    expect(requestsFor()).toHaveLength(before);
    expect(fs.readFileSync(whole).equals(BLOB)).toBe(true);
  });

  it('starts over when the server ignores Range and sends the whole file', async () => {
    const dest = path.join(tempDir('dl'), 'blob.bin');
    fs.writeFileSync(`${dest}.part`, BLOB.subarray(0, 1000));
    fs.writeFileSync(`${dest}.part.json`, JSON.stringify({ url: url(), size: BLOB.length, sha256: SHA, gitSha1: null, etag: null }));
    hub.faults.push({ kind: 'ignore-range', path: '/blob.bin' });
    await downloadFile({ url: url(), dest, label: 'blob.bin', expected: { size: BLOB.length, sha256: SHA } });
    expect(requestsFor().at(-1)?.range).toBe('bytes=1000-');
    expect(fs.readFileSync(dest).equals(BLOB)).toBe(true);
  });

  it('drops a stalled connection and resumes it', async () => {
    const dest = path.join(tempDir('dl'), 'blob.bin');
    hub.faults.push({ kind: 'stall', path: '/blob.bin', afterBytes: 70_000 });
    const reasons: string[] = [];
    await downloadFile({
      url: url(),
      dest,
      label: 'blob.bin',
      expected: { size: BLOB.length, sha256: SHA },
      // Long enough that a busy CI machine cannot produce a second, unplanned stall before the planned one.
      stallMs: 1500,
      backoffMs: 1,
      onRetry: (_n, _d, reason) => reasons.push(reason),
    });
    expect(reasons).toEqual(['no data for 2 s']);
    expect(requestsFor().at(-1)?.range).toBe('bytes=70000-');
    expect(fs.readFileSync(dest).equals(BLOB)).toBe(true);
  });

  it('is cancelled while waiting to retry and keeps the part', async () => {
    const dir = tempDir('dl');
    const dest = path.join(dir, 'blob.bin');
    hub.faults.push({ kind: 'drop', path: '/blob.bin', afterBytes: 40_000, holdUntil: partHolds(dir, 'blob.bin', 40_000) });
    const ac = new AbortController();
    const p = downloadFile({
      url: url(),
      dest,
      label: 'blob.bin',
      expected: { size: BLOB.length, sha256: SHA },
      signal: ac.signal,
      backoffMs: 10_000,
      onRetry: () => ac.abort(),
    });
    const e = await p.then(
      () => undefined,
      (x: unknown) => x as PrepError,
    );
    expect(e?.code).toBe('CANCELLED');
    expect(e?.message).toMatch(/blob\.bin: download cancelled \(the partial file is kept for resuming\)/);
    expect(fs.statSync(`${dest}.part`).size).toBe(40_000);
  });

  it('runs out of retries when every answer to the resume restarts the file', async () => {
    const dest = path.join(tempDir('dl'), 'blob.bin');
    fs.writeFileSync(`${dest}.part`, BLOB.subarray(0, 1000));
    fs.writeFileSync(`${dest}.part.json`, JSON.stringify({ url: url(), size: BLOB.length, sha256: SHA, gitSha1: null, etag: null }));
    let calls = 0;
    // A 206 without Content-Range: where its bytes start is unknown, so the file restarts.
    const badRange: typeof fetch = async () => {
      calls += 1;
      return new Response(BLOB.subarray(0, 10), { status: 206 });
    };
    const e = await downloadFile({
      url: url(), dest, label: 'blob.bin', expected: { size: BLOB.length, sha256: SHA }, fetch: badRange, retries: 3, backoffMs: 1,
    }).then(() => undefined, (x: unknown) => x as PrepError);
    expect(e?.code).toBe('NETWORK');
    expect(e?.message).toMatch(/blob\.bin: network error after 3 retries \(the server answered the resume with another range/);
    expect(calls).toBe(4);
  });

  /**
   * A fetch answering from BLOB as `answer` says for each request: its status, its ETag, and how many of the bytes
   * asked for it sends before the connection drops (all when omitted).
   */
  const scripted = (answer: (n: number, from: number) => { status?: number; etag?: string; bytes?: number }) => {
    const ranges: (string | undefined)[] = [];
    const f: typeof fetch = async (_url, init) => {
      const range = (init?.headers as Record<string, string>).Range;
      ranges.push(range);
      const from = range ? Number(/^bytes=(\d+)-$/.exec(range)![1]) : 0;
      const a = answer(ranges.length, from);
      const status = a.status ?? (range ? 206 : 200);
      const headers = new Headers(a.etag ? { etag: `"${a.etag}"` } : {});
      if (status === 206) headers.set('content-range', `bytes ${from}-${BLOB.length - 1}/${BLOB.length}`);
      if (status !== 200 && status !== 206) return new Response(null, { status, headers });
      const body = BLOB.subarray(from, a.bytes === undefined ? BLOB.length : from + a.bytes);
      const drop = a.bytes !== undefined;
      let sent = body.length === 0;
      return new Response(
        new ReadableStream<Uint8Array>({
          pull(c) {
            if (!sent) {
              sent = true;
              c.enqueue(new Uint8Array(body));
            } else if (drop) c.error(new TypeError('terminated'));
            else c.close();
          },
        }),
        { status, headers },
      );
    };
    return { fetch: f, ranges };
  };

  it('restarts the file on HTTP 416 for the resume offset, and fails a 416 for the whole file', async () => {
    const dest = path.join(tempDir('dl'), 'blob.bin');
    fs.writeFileSync(`${dest}.part`, BLOB.subarray(0, 1000));
    fs.writeFileSync(`${dest}.part.json`, JSON.stringify({ url: url(), size: BLOB.length, sha256: SHA, gitSha1: null, etag: null }));
    const s = scripted((n) => (n === 1 ? { status: 416 } : {}));
    expect(await downloadFile({ url: url(), dest, label: 'blob.bin', expected: { size: BLOB.length, sha256: SHA }, fetch: s.fetch, backoffMs: 1 }))
      .toMatchObject({ sha256: SHA, size: BLOB.length });
    expect(s.ranges).toEqual(['bytes=1000-', undefined]);
    expect(fs.readFileSync(dest).equals(BLOB)).toBe(true);

    const fresh = path.join(tempDir('dl'), 'blob.bin');
    const always = scripted(() => ({ status: 416 }));
    const e = await downloadFile({ url: url(), dest: fresh, label: 'blob.bin', expected: { size: BLOB.length }, fetch: always.fetch, backoffMs: 1 })
      .then(() => undefined, (x: unknown) => x as PrepError);
    expect(e).toMatchObject({ code: 'NETWORK', message: `blob.bin: unexpected HTTP 416 from ${url()}` });
    expect(always.ranges).toEqual([undefined]);
  });

  it('restarts an unpinned file whose ETag changed since the part was written, and resumes a pinned one regardless', async () => {
    const dest = path.join(tempDir('dl'), 'blob.bin');
    fs.writeFileSync(`${dest}.part`, Buffer.alloc(1000, 0xee));
    fs.writeFileSync(`${dest}.part.json`, JSON.stringify({ url: url(), size: BLOB.length, sha256: null, gitSha1: null, etag: 'v1' }));
    const s = scripted(() => ({ etag: 'v2' }));
    await downloadFile({ url: url(), dest, label: 'blob.bin', expected: { size: BLOB.length }, fetch: s.fetch, backoffMs: 1 });
    expect(s.ranges).toEqual(['bytes=1000-', undefined]);
    expect(fs.readFileSync(dest).equals(BLOB)).toBe(true);

    const pinned = path.join(tempDir('dl'), 'blob.bin');
    fs.writeFileSync(`${pinned}.part`, BLOB.subarray(0, 1000));
    fs.writeFileSync(`${pinned}.part.json`, JSON.stringify({ url: url(), size: BLOB.length, sha256: SHA, gitSha1: null, etag: 'v1' }));
    const p = scripted(() => ({ etag: 'v2' }));
    await downloadFile({ url: url(), dest: pinned, label: 'blob.bin', expected: { size: BLOB.length, sha256: SHA }, fetch: p.fetch, backoffMs: 1 });
    expect(p.ranges).toEqual(['bytes=1000-']);
    expect(fs.readFileSync(pinned).equals(BLOB)).toBe(true);
  });

  it("records the new target and the server's ETag in the sidecar before the first byte, so a later start can tell", async () => {
    const dest = path.join(tempDir('dl'), 'blob.bin');
    fs.writeFileSync(`${dest}.part`, Buffer.alloc(5000, 1));
    fs.writeFileSync(`${dest}.part.json`, JSON.stringify({ url: url(), size: BLOB.length, sha256: '0'.repeat(64), gitSha1: null, etag: 'old' }));
    const s = scripted(() => ({ etag: 'v7', bytes: 2000 }));
    const e = await downloadFile({ url: url(), dest, label: 'blob.bin', expected: { size: BLOB.length, sha256: SHA }, fetch: s.fetch, retries: 0 })
      .then(() => undefined, (x: unknown) => x as PrepError);
    expect(e?.code).toBe('NETWORK');
    expect(JSON.parse(fs.readFileSync(`${dest}.part.json`, 'utf8'))).toEqual({ url: url(), size: BLOB.length, sha256: SHA, gitSha1: null, etag: 'v7' });
    expect(fs.readFileSync(`${dest}.part`).equals(BLOB.subarray(0, 2000))).toBe(true);

    const noEtag = path.join(tempDir('dl'), 'blob.bin');
    fs.writeFileSync(`${noEtag}.part.json`, JSON.stringify({ url: url(), size: BLOB.length, sha256: '0'.repeat(64), gitSha1: null, etag: null }));
    const n = scripted(() => ({ bytes: 2000 }));
    await downloadFile({ url: url(), dest: noEtag, label: 'blob.bin', expected: { size: BLOB.length, sha256: SHA }, fetch: n.fetch, retries: 0 })
      .catch(() => undefined);
    expect(JSON.parse(fs.readFileSync(`${noEtag}.part.json`, 'utf8'))).toEqual({ url: url(), size: BLOB.length, sha256: SHA, gitSha1: null, etag: null });
  });

  it('forgives failed attempts that got further than any before, and only those', async () => {
    const dest = path.join(tempDir('dl'), 'blob.bin');
    const s = scripted(() => ({ bytes: 50_000 }));
    await downloadFile({ url: url(), dest, label: 'blob.bin', expected: { size: BLOB.length, sha256: SHA }, fetch: s.fetch, retries: 1, backoffMs: 1 });
    expect(fs.readFileSync(dest).equals(BLOB)).toBe(true);
    expect(s.ranges).toHaveLength(6);

    // Progress once, then none: the retries run out (a 404 ends a download that would retry for ever).
    const stuck = path.join(tempDir('dl'), 'blob.bin');
    const t = scripted((k) => (k > 10 ? { status: 404 } : { bytes: k === 1 ? 50_000 : 0 }));
    const e = await downloadFile({ url: url(), dest: stuck, label: 'blob.bin', expected: { size: BLOB.length, sha256: SHA }, fetch: t.fetch, retries: 2, backoffMs: 1 })
      .then(() => undefined, (x: unknown) => x as PrepError);
    expect(e?.code).toBe('NETWORK');
    expect(t.ranges).toEqual([undefined, 'bytes=50000-', 'bytes=50000-']);
  });

  it('fails at once, as a full disk, when writing the part finds no space', async () => {
    const dest = path.join(tempDir('dl'), 'blob.bin');
    const open = fs.promises.open.bind(fs.promises);
    const spy = vi.spyOn(fs.promises, 'open').mockImplementation(async (...args: Parameters<typeof fs.promises.open>) => {
      const fh = await open(...args);
      fh.write = (() => Promise.reject(Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' }))) as typeof fh.write;
      return fh;
    });
    try {
      const s = scripted(() => ({}));
      const e = await downloadFile({ url: url(), dest, label: 'blob.bin', expected: { size: BLOB.length, sha256: SHA }, fetch: s.fetch, backoffMs: 1 })
        .then(() => undefined, (x: unknown) => x as PrepError);
      expect(e?.code).toBe('DISK_FULL');
      expect(s.ranges).toHaveLength(1);
    } finally {
      spy.mockRestore();
    }
  });

  it('deletes the part of a download whose sha256 does not verify, leaving no file under the name', async () => {
    const dest = path.join(tempDir('dl'), 'blob.bin');
    const e = await downloadFile({ url: url(), dest, label: 'blob.bin', expected: { size: BLOB.length, sha256: '0'.repeat(64) } })
      .then(() => undefined, (x: unknown) => x as PrepError);
    expect(e?.code).toBe('HASH_MISMATCH');
    expect(e?.message).toBe(`blob.bin: downloaded file does not verify (sha256 ${SHA}, expected ${'0'.repeat(64)}); the partial download was deleted`);
    expect([dest, `${dest}.part`, `${dest}.part.json`].filter((f) => fs.existsSync(f))).toEqual([]);

    const g = await downloadFile({ url: url(), dest, label: 'blob.bin', expected: { size: BLOB.length, gitSha1: '0'.repeat(40) } })
      .then(() => undefined, (x: unknown) => x as PrepError);
    expect(g?.message).toBe(`blob.bin: downloaded file does not verify (git sha1 ${GIT}, expected ${'0'.repeat(40)}); the partial download was deleted`);
    expect(fs.existsSync(dest)).toBe(false);
  });

  it('doubles the wait between retries', async () => {
    const dest = path.join(tempDir('dl'), 'blob.bin');
    const delays: number[] = [];
    const down: typeof fetch = async () => new Response('busy', { status: 503 });
    const e = await downloadFile({
      url: url(), dest, label: 'blob.bin', expected: { size: BLOB.length }, fetch: down, retries: 3, backoffMs: 5,
      onRetry: (_attempt, delay) => void delays.push(delay),
    }).then(() => undefined, (x: unknown) => x as PrepError);
    expect(e?.code).toBe('NETWORK');
    expect(delays).toEqual([5, 10, 20]);
  });

  it.each<[number, string, RegExp]>([
    [403, 'PERMISSION', /^blob\.bin: the repository is gated or private \(HTTP 403\)/],
    [404, 'NOT_FOUND', /^blob\.bin: not found at .* \(HTTP 404\)$/],
    [500, 'NETWORK', /^blob\.bin: network error after 0 retries \(HTTP 500\)/],
    [429, 'NETWORK', /^blob\.bin: network error after 0 retries \(HTTP 429\)/],
  ])('answers HTTP %i with %s', async (status, code, message) => {
    const dest = path.join(tempDir('dl'), 'blob.bin');
    const answer: typeof fetch = async () => new Response('no', { status });
    const e = await downloadFile({ url: url(), dest, label: 'blob.bin', expected: { size: BLOB.length }, fetch: answer, retries: 0 })
      .then(() => undefined, (x: unknown) => x as PrepError);
    expect(e?.code).toBe(code);
    expect(e?.message).toMatch(message);
  });

  it('downloads a zero-byte file', async () => {
    const dest = path.join(tempDir('dl'), 'empty.json');
    const empty: typeof fetch = async () => new Response(new Uint8Array(0), { status: 200, headers: { 'Content-Length': '0' } });
    const gitSha1 = createHash('sha1').update('blob 0\0').digest('hex');
    const digest = await downloadFile({ url: url(), dest, label: 'o/m@abc/empty.json', expected: { size: 0, gitSha1 }, fetch: empty });
    expect(digest).toMatchObject({ size: 0, gitSha1, sha256: createHash('sha256').digest('hex') });
    expect(fs.readFileSync(dest).length).toBe(0);
    expect(fs.readdirSync(path.dirname(dest))).toEqual(['empty.json']);
  });

  // Answers that cannot be the pinned file: each is retried and the valid partial download is kept.
  it.each([
    ['a 200 HTML page (captive portal)', () => new Response('<html>Please log in to the hotel Wi-Fi</html>', { status: 200, headers: { 'Content-Type': 'text/html', 'Content-Length': '45' } }), /HTTP 200 \(text\/html\) for a file of 45 bytes, expected 300000/],
    ['a 206 whose total differs (another cached object)', () => new Response(new Uint8Array(100), { status: 206, headers: { 'Content-Range': 'bytes 150000-150099/150100', 'Content-Length': '100' } }), /HTTP 206 for a file of 150100 bytes, expected 300000/],
  ])('keeps the partial download after %s and reports it as a network error', async (_what, answer, reason) => {
    const dest = path.join(tempDir('dl'), 'model-00001-of-00003.safetensors');
    fs.writeFileSync(`${dest}.part`, BLOB.subarray(0, 150_000));
    fs.writeFileSync(`${dest}.part.json`, JSON.stringify({ url: url(), size: BLOB.length, sha256: SHA, gitSha1: null, etag: null }));
    let calls = 0;
    const bogus: typeof fetch = async () => {
      calls += 1;
      return answer();
    };
    const e = await downloadFile({
      url: url(), dest, label: 'o/m@abc/model-00001-of-00003.safetensors', expected: { size: BLOB.length, sha256: SHA }, fetch: bogus, retries: 2, backoffMs: 1,
    }).then(() => undefined, (x: unknown) => x as PrepError);
    expect(e?.code).toBe('NETWORK');
    expect(e?.message).toMatch(/^o\/m@abc\/model-00001-of-00003\.safetensors: network error after 2 retries \(the server answered /);
    expect(e?.message).toMatch(reason);
    expect(e?.message).toMatch(/150000 bytes are kept/);
    expect(calls).toBe(3);
    expect(fs.readFileSync(`${dest}.part`).equals(BLOB.subarray(0, 150_000))).toBe(true);
    expect(fs.existsSync(`${dest}.part.json`)).toBe(true);
    // The real server then resumes from the kept bytes.
    await downloadFile({ url: url(), dest, label: 'blob.bin', expected: { size: BLOB.length, sha256: SHA } });
    expect(requestsFor().at(-1)?.range).toBe('bytes=150000-');
    expect(fs.readFileSync(dest).equals(BLOB)).toBe(true);
  });

  it('refuses a second download of the same file while the first runs, which still verifies', async () => {
    const dest = path.join(tempDir('dl'), 'blob.bin');
    hub.faults.push({ kind: 'slow', path: '/blob.bin', bytesPerSec: 1_000_000 });
    const opts = { url: url(), dest, label: 'blob.bin', expected: { size: BLOB.length, sha256: SHA } };
    const first = downloadFile(opts);
    const second = await downloadFile(opts).then(() => undefined, (x: unknown) => x as PrepError);
    expect(second?.message).toMatch(/blob\.bin: already being downloaded to /);
    expect(await first).toMatchObject({ sha256: SHA });
    hub.faults.splice(0);
    expect(fs.readFileSync(dest).equals(BLOB)).toBe(true);
    // Once it has finished, the same file can be downloaded again.
    await expect(downloadFile(opts)).resolves.toMatchObject({ sha256: SHA });
  });
});

describe('toPrepError', () => {
  const errno = (code: string): NodeJS.ErrnoException => Object.assign(new Error(`${code}: boom`), { code });
  it.each([
    ['ENOSPC', 'DISK_FULL', /x\.bin: the disk is full \(ENOSPC\)/],
    ['EACCES', 'PERMISSION', /x\.bin: permission denied \(EACCES\)/],
    ['EROFS', 'PERMISSION', /x\.bin: permission denied \(EROFS\)/],
    ['EIO', 'INTERNAL', /x\.bin: EIO: boom/],
  ])('maps %s to %s naming the file', (code, expected, text) => {
    const e = toPrepError(errno(code), '/data/x.bin');
    expect(e.code).toBe(expected);
    expect(e.message).toMatch(text);
  });

});
