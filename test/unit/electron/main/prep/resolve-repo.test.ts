import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { PrepError } from '../../../../../electron/main/prep/prep-error.js';
import { resolveRepo, unsafeRepoPath } from '../../../../../electron/main/prep/resolve-repo.js';
import { startHubServer, type HubServer } from '../../../../fixtures/hub-server.js';
import { makeTestRepo, removeTempDirs, tempDir, TEST_REPO } from './test-repo.js';

describe('unsafeRepoPath', () => {
  it.each([
    ['config.json', ''],
    ['onnx/model.onnx', ''],
    ['..foo/bar..x', ''],
    ['console.json', ''],
    ['com10.bin', ''],
    ['../evil.json', "it has an empty, '.' or '..' segment"],
    ['a/../../evil', "it has an empty, '.' or '..' segment"],
    ['a//b', "it has an empty, '.' or '..' segment"],
    ['./config.json', "it has an empty, '.' or '..' segment"],
    ['/etc/passwd', 'it is empty or absolute'],
    ['', 'it is empty or absolute'],
    ['..\\\\evil.dll', 'it holds a backslash, a colon or a control character'],
    ['C:evil', 'it holds a backslash, a colon or a control character'],
    ['a\nb', 'it holds a backslash, a colon or a control character'],
    ['CON.safetensors', "'CON.safetensors' names a Windows device (CON, PRN, AUX, NUL, COM0-9, LPT0-9)"],
    ['shards/aux.safetensors', "'aux.safetensors' names a Windows device (CON, PRN, AUX, NUL, COM0-9, LPT0-9)"],
    ['nul', "'nul' names a Windows device (CON, PRN, AUX, NUL, COM0-9, LPT0-9)"],
    ['LPT1 .txt', "'LPT1 .txt' names a Windows device (CON, PRN, AUX, NUL, COM0-9, LPT0-9)"],
    ['com3.tar.gz', "'com3.tar.gz' names a Windows device (CON, PRN, AUX, NUL, COM0-9, LPT0-9)"],
    ['model-1.safetensors.', "a segment ends in '.' or a space, which Windows drops"],
    ['model-1.safetensors ', "a segment ends in '.' or a space, which Windows drops"],
    ['dir./config.json', "a segment ends in '.' or a space, which Windows drops"],
    ['..foo/bar..', "a segment ends in '.' or a space, which Windows drops"],
    ...['a|b.safetensors', 'what?.json', 'a<b>.json', 'a*.bin', 'say"hi".txt'].map((p) => [p, 'it holds a character Windows does not allow in file names (< > " | ? *)']),
  ])('%j: %j', (p, why) => {
    expect(unsafeRepoPath(p)).toBe(why);
  });
});

describe('resolveRepo against a Hub that lists a path outside the repo', () => {
  let hub: HubServer;
  beforeAll(async () => {
    hub = await startHubServer({ repos: { [TEST_REPO]: { dir: await makeTestRepo(tempDir('resolve')) } } });
  });
  afterAll(async () => {
    removeTempDirs();
    await hub.close();
  });

  it.each(['../../evil.json', 'CON.safetensors'])('refuses a listing with %j as MODEL_INVALID, naming the path', async (bad) => {
    const evil: typeof fetch = async (input, init) => {
      const res = await fetch(input, init);
      if (!String(input instanceof Request ? input.url : input).includes('/tree/')) return res;
      const entries = (await res.json()) as object[];
      entries.push({ type: 'file', path: bad, oid: '0'.repeat(40), size: 2 });
      return new Response(JSON.stringify(entries), { status: res.status, headers: res.headers });
    };
    const e = await resolveRepo({ repo: TEST_REPO, revision: 'main', hubUrl: hub.url, fetch: evil }).then(() => null, (x: unknown) => x);
    if (!(e instanceof PrepError)) throw new Error(`expected a PrepError, got ${String(e)}`);
    expect(e.code).toBe('MODEL_INVALID');
    expect(e.message).toContain(`${TEST_REPO}@main: the Hub lists a file '${bad}' that cannot be saved inside the model folder`);
    const plain = await resolveRepo({ repo: TEST_REPO, revision: 'main', hubUrl: hub.url });
    expect(plain.files.length).toBeGreaterThan(3);
  });
});

describe('resolveRepo while the Hub cannot be reached', () => {
  it('is cancelled during its backoff between attempts, not after it', async () => {
    const controller = new AbortController();
    let calls = 0;
    const refusing: typeof fetch = async () => {
      calls++;
      setTimeout(() => controller.abort(), 10);
      throw new TypeError('fetch failed', { cause: { code: 'ECONNREFUSED' } });
    };
    const started = Date.now();
    const e = await resolveRepo({ repo: 'o/m', revision: 'main', hubUrl: 'http://hub.invalid', fetch: refusing, backoffMs: 60_000, signal: controller.signal }).then(
      () => null,
      (x: unknown) => x,
    );
    if (!(e instanceof PrepError)) throw new Error(`expected a PrepError, got ${String(e)}`);
    expect([e.code, e.message]).toEqual(['CANCELLED', 'o/m@main: cancelled']);
    expect(calls).toBe(1);
    // The first backoff is a minute; the abort came 10 ms into it.
    expect(Date.now() - started).toBeLessThan(10_000);
  });
});
