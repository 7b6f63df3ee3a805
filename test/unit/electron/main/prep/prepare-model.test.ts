import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';

import { listPreparedModels } from '../../../../../electron/main/prep/list-prepared-models.js';
import { prepareModel, type PrepareModelOptions } from '../../../../../electron/main/prep/prepare-model.js';
import { PrepError } from '../../../../../electron/main/prep/prep-error.js';
import type { PrepEvent } from '../../../../../electron/main/prep/prep-events.js';
import { partHolds, startHubServer, type HubServer } from '../../../../fixtures/hub-server.js';
import { FAKE_PACKER, makeTestRepo, removeTempDirs, tempDir, TEST_REPO, TEST_TOKEN } from './test-repo.js';

const SHARD1 = 'model-00001-of-00002.safetensors';
const SHARD2 = 'model-00002-of-00002.safetensors';

let hub: HubServer;
let repoDir: string;
let dataDir: string;

async function expectPrepError(p: Promise<unknown>, code: string, text: RegExp): Promise<PrepError> {
  const error = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(PrepError);
  expect((error as PrepError).code).toBe(code);
  expect((error as PrepError).message).toMatch(text);
  return error as PrepError;
}

function opts(extra: Partial<PrepareModelOptions> = {}): PrepareModelOptions {
  return { repo: TEST_REPO, revision: 'main', dataDir, hubUrl: hub.url, hfCacheDir: null, pack: false, backoffMs: 1, ...extra };
}

function resolveRequests(file: string): { range?: string }[] {
  return hub.requests.filter((r) => r.url.includes('/resolve/') && r.url.endsWith(`/${file}`));
}

beforeAll(async () => {
  repoDir = await makeTestRepo(tempDir('repo'));
  const llamaDir = await makeTestRepo(tempDir('llama'));
  const cfg = JSON.parse(fs.readFileSync(path.join(llamaDir, 'config.json'), 'utf8')) as Record<string, unknown>;
  fs.writeFileSync(path.join(llamaDir, 'config.json'), JSON.stringify({ ...cfg, model_type: 'llama', architectures: ['LlamaForCausalLM'] }));
  const mismatchDir = await makeTestRepo(tempDir('mismatch'));
  const mcfg = JSON.parse(fs.readFileSync(path.join(mismatchDir, 'config.json'), 'utf8')) as { intermediate_size: number };
  fs.writeFileSync(path.join(mismatchDir, 'config.json'), JSON.stringify({ ...mcfg, intermediate_size: mcfg.intermediate_size * 2 }));
  const truncDir = await makeTestRepo(tempDir('trunc'));
  const shard = fs.readFileSync(path.join(truncDir, SHARD2));
  fs.writeFileSync(path.join(truncDir, SHARD2), shard.subarray(0, shard.length - 1000));
  hub = await startHubServer({
    repos: {
      [TEST_REPO]: { dir: repoDir, refs: ['v1'] },
      'test-org/gated-olmoe': { dir: repoDir, gated: { token: TEST_TOKEN } },
      'test-org/llama': { dir: llamaDir },
      'test-org/truncated': { dir: truncDir },
      'test-org/config-mismatch': { dir: mismatchDir },
    },
    pageSize: 3,
  });
});

afterAll(async () => {
  await hub.close();
  if (tinyFs) {
    // A download the ENOSPC case aborted may still hold a file there for a moment: then detach it lazily.
    try {
      execFileSync('umount', [tinyFs], { stdio: 'ignore' });
    } catch {
      execFileSync('umount', ['-l', tinyFs], { stdio: 'ignore' });
    }
  }
  removeTempDirs();
});

beforeEach(() => {
  dataDir = tempDir('data');
  hub.faults.length = 0;
});

describe('prepareModel against the local hub', () => {
  it('downloads only the needed files, verifies them and writes prepared.json', async () => {
    const events: PrepEvent[] = [];
    const result = await prepareModel(opts({ onEvent: (e) => events.push(e) }));
    const { commit } = hub.repoInfo(TEST_REPO);
    expect(result.commit).toBe(commit);
    expect(result.modelDir).toBe(path.join(dataDir, 'models', 'test-org--tiny-olmoe', commit));
    const got = fs.readdirSync(path.join(result.modelDir, 'source')).sort();
    expect(got).toEqual(
      [
        'chat_template.jinja',
        'config.json',
        'generation_config.json',
        SHARD1,
        SHARD2,
        'model.safetensors.index.json',
        'special_tokens_map.json',
        'tokenizer.json',
        'tokenizer_config.json',
      ].sort(),
    );
    for (const name of got) expect(fs.readFileSync(path.join(result.modelDir, 'source', name)).equals(fs.readFileSync(path.join(repoDir, name))), name).toBe(true);
    expect(resolveRequests('README.md')).toHaveLength(0);
    expect(resolveRequests('extra.bin')).toHaveLength(0);
    const manifest = JSON.parse(fs.readFileSync(result.manifestPath, 'utf8')) as { commit: string; source: { files: { path: string; sha256: string }[] } };
    expect(manifest.commit).toBe(commit);
    const shardInfo = hub.repoInfo(TEST_REPO).files.find((f) => f.path === SHARD1)!;
    expect(manifest.source.files.find((f) => f.path === SHARD1)?.sha256).toBe(shardInfo.sha256);
    const cfgInfo = hub.repoInfo(TEST_REPO).files.find((f) => f.path === 'config.json')!;
    expect(manifest.source.files.find((f) => f.path === 'config.json')?.sha256).toBe(cfgInfo.sha256);
    const progress = events.filter((e) => e.type === 'progress');
    expect(progress.length).toBeGreaterThan(0);
    const last = progress.at(-1)!;
    expect(last.type === 'progress' && last.doneBytes === last.totalBytes).toBe(true);
    expect(events.filter((e) => e.type === 'file').every((e) => e.type === 'file' && e.source === 'download')).toBe(true);
    expect(events.at(-1)?.type).toBe('done');
    const listed = await listPreparedModels(dataDir, { verify: true });
    expect(listed).toHaveLength(1);
    expect(listed[0]).toMatchObject({ repo: TEST_REPO, commit, ready: true, packedDir: null });
    // Same-size damage passes the size check and is caught only when re-hashing.
    const shardPath = path.join(result.modelDir, 'source', SHARD2);
    const bytes = fs.readFileSync(shardPath);
    bytes[bytes.length - 1] = bytes[bytes.length - 1]! ^ 0xff;
    fs.writeFileSync(shardPath, bytes);
    expect((await listPreparedModels(dataDir))[0]?.ready).toBe(true);
    const rehashed = await listPreparedModels(dataDir, { verify: true });
    expect(rehashed[0]?.ready).toBe(false);
    expect(rehashed[0]?.problems.join()).toMatch(new RegExp(`source/${SHARD2}: sha256 [0-9a-f]{64}, expected`));
    const sent = hub.bytesSent(SHARD2);
    await prepareModel(opts({ verify: true }));
    expect(hub.bytesSent(SHARD2) - sent).toBe(bytes.length);
    expect((await listPreparedModels(dataDir, { verify: true }))[0]?.ready).toBe(true);
  });

  it('is idempotent: a second run downloads nothing', async () => {
    await prepareModel(opts());
    const before = hub.bytesSent();
    const again = await prepareModel(opts());
    expect(hub.bytesSent()).toBe(before);
    expect((await listPreparedModels(dataDir))[0]?.ready).toBe(true);
    expect(again.commit).toBe(hub.repoInfo(TEST_REPO).commit);
  });

  it('resumes a dropped connection with a Range request instead of restarting', async () => {
    const size = fs.statSync(path.join(repoDir, SHARD1)).size;
    hub.faults.push({ kind: 'drop', path: SHARD1, afterBytes: 50_000, holdUntil: partHolds(dataDir, SHARD1, 50_000) });
    const sentBefore = hub.bytesSent(SHARD1);
    const events: PrepEvent[] = [];
    await prepareModel(opts({ onEvent: (e) => events.push(e) }));
    const ranges = resolveRequests(SHARD1).slice(-2).map((r) => r.range);
    expect(ranges).toEqual([undefined, 'bytes=50000-']);
    expect(hub.bytesSent(SHARD1) - sentBefore).toBe(size);
    expect(events.some((e) => e.type === 'retry' && e.file === SHARD1)).toBe(true);
    expect((await listPreparedModels(dataDir, { verify: true }))[0]?.ready).toBe(true);
  });

  it('continues after an abort mid-download from the .part file', async () => {
    hub.faults.push({ kind: 'slow', path: SHARD2, bytesPerSec: 200_000 });
    const ac = new AbortController();
    const run = prepareModel(
      opts({
        signal: ac.signal,
        onEvent: (e) => {
          if (e.type === 'progress' && e.file === SHARD2 && (e.fileDoneBytes ?? 0) > 30_000) ac.abort();
        },
      }),
    );
    await expectPrepError(run, 'CANCELLED', /cancelled/);
    const commit = hub.repoInfo(TEST_REPO).commit;
    const part = path.join(dataDir, 'models', 'test-org--tiny-olmoe', commit, 'source', `${SHARD2}.part`);
    const partSize = fs.statSync(part).size;
    expect(partSize).toBeGreaterThan(30_000);
    expect(fs.existsSync(path.join(dataDir, 'models', 'test-org--tiny-olmoe', commit, 'prepared.json'))).toBe(false);
    expect((await listPreparedModels(dataDir)).filter((m) => m.ready)).toHaveLength(0);
    hub.faults.length = 0;
    await prepareModel(opts());
    expect(resolveRequests(SHARD2).at(-1)?.range).toBe(`bytes=${partSize}-`);
    expect((await listPreparedModels(dataDir, { verify: true }))[0]?.ready).toBe(true);
  });

  it('fetches the shards at once: one completes while the other stalls, and a cancel keeps the stalled part', async () => {
    hub.faults.push({ kind: 'stall', path: SHARD1, afterBytes: 20_000 });
    const ac = new AbortController();
    const events: PrepEvent[] = [];
    let shard2Done!: () => void;
    const shard2 = new Promise<void>((resolve) => (shard2Done = resolve));
    const run = prepareModel(
      opts({
        signal: ac.signal,
        onEvent: (e) => {
          events.push(e);
          if (e.type === 'file' && e.path === SHARD2) shard2Done();
        },
      }),
    );
    // Cancelled once the second shard is in and the first holds what it got before its stall.
    await Promise.all([shard2, partHolds(dataDir, SHARD1, 20_000)()]);
    ac.abort();
    await expectPrepError(run, 'CANCELLED', /cancelled/);
    expect(events.some((e) => e.type === 'file' && e.path === SHARD2 && e.source === 'download')).toBe(true);
    expect(events.some((e) => e.type === 'file' && e.path === SHARD1)).toBe(false);
    const both = events.filter((e) => e.type === 'progress' && e.files !== undefined);
    expect(both.length).toBeGreaterThan(0);
    expect(both.every((e) => e.type === 'progress' && e.files!.includes(SHARD1) && e.files!.includes(SHARD2))).toBe(true);
    const source = path.join(dataDir, 'models', 'test-org--tiny-olmoe', hub.repoInfo(TEST_REPO).commit, 'source');
    expect(fs.statSync(path.join(source, `${SHARD1}.part`)).size).toBe(20_000);
    const shard2Requests = resolveRequests(SHARD2).length;
    await prepareModel(opts());
    expect(resolveRequests(SHARD1).at(-1)?.range).toBe('bytes=20000-');
    expect(resolveRequests(SHARD2)).toHaveLength(shard2Requests);
    expect((await listPreparedModels(dataDir, { verify: true }))[0]?.ready).toBe(true);
  });

  it('stops the other shards when one fails, throws that failure, and keeps their parts', async () => {
    // The corrupt shard's body comes only once the other holds what it gets before its stall.
    hub.faults.push(
      { kind: 'corrupt', path: SHARD1, holdUntil: partHolds(dataDir, SHARD2, 20_000) },
      { kind: 'stall', path: SHARD2, afterBytes: 20_000 },
    );
    await expectPrepError(prepareModel(opts()), 'HASH_MISMATCH', new RegExp(`${SHARD1}.*sha256`));
    const source = path.join(dataDir, 'models', 'test-org--tiny-olmoe', hub.repoInfo(TEST_REPO).commit, 'source');
    expect(fs.statSync(path.join(source, `${SHARD2}.part`)).size).toBe(20_000);
    await prepareModel(opts());
    expect(resolveRequests(SHARD2).at(-1)?.range).toBe('bytes=20000-');
    expect((await listPreparedModels(dataDir, { verify: true }))[0]?.ready).toBe(true);
  });

  it('fetches one shard after the other with downloadsAtOnce 1', async () => {
    const before = hub.requests.length;
    hub.faults.push({ kind: 'drop', path: SHARD1, afterBytes: 20_000, holdUntil: partHolds(dataDir, SHARD1, 20_000) });
    await prepareModel(opts({ downloadsAtOnce: 1 }));
    const urls = hub.requests.slice(before).map((r) => r.url);
    const last1 = urls.findLastIndex((u) => u.endsWith(`/${SHARD1}`));
    const first2 = urls.findIndex((u) => u.endsWith(`/${SHARD2}`));
    expect(urls.filter((u) => u.endsWith(`/${SHARD1}`))).toHaveLength(2);
    expect(first2).toBeGreaterThan(last1);
  });

  it('fails on wrong bytes naming the file, deletes the part, and succeeds on the next start', async () => {
    hub.faults.push({ kind: 'corrupt', path: SHARD1 });
    const error = await expectPrepError(prepareModel(opts()), 'HASH_MISMATCH', new RegExp(`${SHARD1}.*sha256`));
    expect(error.message).toMatch(/partial download was deleted/);
    const src = path.join(dataDir, 'models', 'test-org--tiny-olmoe', hub.repoInfo(TEST_REPO).commit, 'source');
    expect(fs.existsSync(path.join(src, `${SHARD1}.part`))).toBe(false);
    expect(fs.existsSync(path.join(src, SHARD1))).toBe(false);
    await prepareModel(opts());
    expect((await listPreparedModels(dataDir, { verify: true }))[0]?.ready).toBe(true);
  });

  it('reports an unknown repo and an unknown revision', async () => {
    await expectPrepError(prepareModel(opts({ repo: 'test-org/nope' })), 'MODEL_NOT_FOUND', /test-org\/nope.*not found.*404/);
    await expectPrepError(prepareModel(opts({ revision: 'no-such-branch' })), 'NOT_FOUND', /revision 'no-such-branch' not found/);
  });

  it('resolves a tag to the commit sha', async () => {
    const result = await prepareModel(opts({ revision: 'v1' }));
    expect(result.commit).toBe(hub.repoInfo(TEST_REPO).commit);
    expect(result.manifest.revision).toBe('v1');
  });

  it('asks for a token on a gated repo and uses it as a Bearer header', async () => {
    // Said for any screen: no CLI flag or environment variable in it (the CLI adds those).
    await expectPrepError(prepareModel(opts({ repo: 'test-org/gated-olmoe' })), 'PERMISSION', /gated or private \(HTTP 401\); it needs an access token$/);
    await expectPrepError(prepareModel(opts({ repo: 'test-org/gated-olmoe', token: 'hf_wrong' })), 'PERMISSION', /gated or private.*403/);
    const result = await prepareModel(opts({ repo: 'test-org/gated-olmoe', token: TEST_TOKEN }));
    expect(result.manifest.source.files.length).toBe(9);
    const shardReq = hub.requests.filter((r) => r.url.includes('gated-olmoe/resolve/'));
    expect(shardReq.length).toBeGreaterThan(0);
    expect(shardReq.every((r) => r.authorization === `Bearer ${TEST_TOKEN}`)).toBe(true);
  });

  it('reuses files from the standard HF cache without downloading them', async () => {
    const { commit } = hub.repoInfo(TEST_REPO);
    const cache = tempDir('hfcache');
    const snap = path.join(cache, 'models--test-org--tiny-olmoe', 'snapshots', commit);
    const blobs = path.join(cache, 'models--test-org--tiny-olmoe', 'blobs');
    fs.mkdirSync(snap, { recursive: true });
    fs.mkdirSync(blobs, { recursive: true });
    for (const f of hub.repoInfo(TEST_REPO).files) {
      const blob = path.join(blobs, f.lfs ? f.sha256 : f.gitSha1);
      fs.copyFileSync(path.join(repoDir, f.path), blob);
      fs.symlinkSync(path.relative(snap, blob), path.join(snap, f.path));
    }
    const before = hub.bytesSent();
    const events: PrepEvent[] = [];
    await prepareModel(opts({ hfCacheDir: cache, onEvent: (e) => events.push(e) }));
    expect(hub.bytesSent()).toBe(before);
    const files = events.filter((e) => e.type === 'file');
    expect(files).toHaveLength(9);
    expect(files.every((e) => e.type === 'file' && e.source === 'hf-cache')).toBe(true);
    expect((await listPreparedModels(dataDir, { verify: true }))[0]?.ready).toBe(true);

    // A cache copy that does not verify is ignored and the file is downloaded.
    const data2 = tempDir('data');
    const shard = path.join(blobs, hub.repoInfo(TEST_REPO).files.find((f) => f.path === SHARD1)!.sha256);
    const bytes = fs.readFileSync(shard);
    bytes[100] = bytes[100]! ^ 1;
    fs.writeFileSync(shard, bytes);
    const sent = hub.bytesSent(SHARD1);
    const events2: PrepEvent[] = [];
    await prepareModel(opts({ dataDir: data2, hfCacheDir: cache, onEvent: (e) => events2.push(e) }));
    expect(hub.bytesSent(SHARD1) - sent).toBe(bytes.length);
    expect(events2.some((e) => e.type === 'warning' && e.message.includes(SHARD1))).toBe(true);
  });

  it('refuses a non-OLMoE config before fetching any shard', async () => {
    const before = hub.requests.length;
    await expectPrepError(prepareModel(opts({ repo: 'test-org/llama' })), 'MODEL_INVALID', /config\.json: not an OLMoE architecture \(model_type 'llama'/);
    expect(hub.requests.slice(before).some((r) => r.url.endsWith('.safetensors'))).toBe(false);
  });

  it('reports a truncated shard', async () => {
    await expectPrepError(prepareModel(opts({ repo: 'test-org/truncated' })), 'MODEL_INVALID', new RegExp(`${SHARD2}: truncated`));
    expect((await listPreparedModels(dataDir)).filter((m) => m.ready)).toHaveLength(0);
  });

  it('retries server errors with backoff, then fails with a network error; the next start resumes', async () => {
    hub.faults.push({ kind: 'drop', path: SHARD1, afterBytes: 20_000, holdUntil: partHolds(dataDir, SHARD1, 20_000) });
    const events: PrepEvent[] = [];
    const onEvent = (e: PrepEvent): void => {
      if (e.type === 'retry' && e.attempt === 1) hub.faults.push({ kind: 'status', path: SHARD1, status: 503, times: 10 });
      events.push(e);
    };
    await expectPrepError(
      prepareModel(opts({ retries: 3, onEvent })),
      'NETWORK',
      new RegExp(`${SHARD1}: network error after 3 retries \\(HTTP 503\\); 20000 bytes are kept`),
    );
    expect(events.filter((e) => e.type === 'retry').map((e) => e.type === 'retry' && e.delayMs)).toEqual([1, 2, 4]);
    hub.faults.length = 0;
    await prepareModel(opts());
    expect(resolveRequests(SHARD1).at(-1)?.range).toBe('bytes=20000-');
  });

  it('fails with a network error when the hub cannot be reached', async () => {
    await expectPrepError(prepareModel(opts({ hubUrl: 'http://127.0.0.1:9' })), 'NETWORK', /cannot reach the Hub at http:\/\/127\.0\.0\.1:9/);
  });

  it('checks free disk space before downloading shards', async () => {
    const before = hub.requests.length;
    await expectPrepError(
      prepareModel(opts({ statfs: async () => ({ bavail: 10, bsize: 4096 }) })),
      'DISK_FULL',
      /not enough free disk space .*need 0\.00 GB/,
    );
    expect(hub.requests.slice(before).some((r) => r.url.endsWith('.safetensors'))).toBe(false);
  });
});

function mountTinyTmpfs(): string | undefined {
  const dir = tempDir('tmpfs');
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=256k', 'tmpfs', dir], { stdio: 'ignore' });
    return dir;
  } catch {
    return undefined;
  }
}
const tinyFs = process.getuid?.() === 0 ? mountTinyTmpfs() : undefined;

describe.skipIf(tinyFs === undefined)(`prepareModel on a full disk${tinyFs ? '' : ' (skipped: needs root to mount a 256 KiB tmpfs)'}`, () => {
  it('refuses to start when free space is short, and maps ENOSPC mid-download to DISK_FULL naming the file', async () => {
    const before = hub.requests.length;
    await expectPrepError(prepareModel(opts({ dataDir: tinyFs! })), 'DISK_FULL', /not enough free disk space in .*need 0\.00 GB, 0\.00 GB free/);
    expect(hub.requests.slice(before).some((r) => r.url.endsWith('.safetensors'))).toBe(false);
    const e = await expectPrepError(
      prepareModel(opts({ dataDir: tinyFs!, statfs: async () => ({ bavail: 1e9, bsize: 4096 }) })),
      'DISK_FULL',
      /model-0000[12]-of-00002\.safetensors: the disk is full \(ENOSPC\)/,
    );
    expect(e.message).toContain(tinyFs!);
  });
});

describe('prepareModel lock', () => {
  it('refuses a second preparation of the same model while one runs, and takes over a stale lock', async () => {
    hub.faults.push({ kind: 'slow', path: SHARD1, bytesPerSec: 300_000 });
    const first = prepareModel(opts());
    await new Promise((r) => setTimeout(r, 300));
    await expectPrepError(prepareModel(opts()), 'BAD_INPUT', /already being prepared in this process/);
    await first;
    const modelDir = path.join(dataDir, 'models', 'test-org--tiny-olmoe', hub.repoInfo(TEST_REPO).commit);
    expect(fs.existsSync(path.join(modelDir, '.prepare.lock'))).toBe(false);

    const data2 = tempDir('data');
    const dir2 = path.join(data2, 'models', 'test-org--tiny-olmoe', hub.repoInfo(TEST_REPO).commit);
    fs.mkdirSync(dir2, { recursive: true });
    fs.writeFileSync(path.join(dir2, '.prepare.lock'), '999999999');
    await prepareModel(opts({ dataDir: data2 }));
    expect((await listPreparedModels(data2))[0]?.ready).toBe(true);
  });
});

describe('prepareModel in a folder it may not write', () => {
  it('fails with PERMISSION naming the folder', async () => {
    const models = path.join(dataDir, 'models');
    fs.mkdirSync(models);
    // root ignores mode bits, so as root the folder is made immutable instead (EPERM).
    const asRoot = process.getuid?.() === 0;
    if (asRoot) execFileSync('chattr', ['+i', models]);
    else fs.chmodSync(models, 0o500);
    try {
      await expectPrepError(prepareModel(opts()), 'PERMISSION', /models\/test-org--tiny-olmoe\/[0-9a-f]{40}\/source: permission denied \(E(ACCES|PERM)\)/);
    } finally {
      if (asRoot) execFileSync('chattr', ['-i', models]);
      else fs.chmodSync(models, 0o700);
    }
  });
});

describe('prepareModel with the packer (fake packer script)', () => {
  const packer = (env: Record<string, string> = {}) => ({ command: process.execPath, args: [FAKE_PACKER], env });

  it('packs, relays progress and lists the model ready with its INT4 folder', async () => {
    const events: PrepEvent[] = [];
    const result = await prepareModel(opts({ pack: true, packer: packer(), onEvent: (e) => events.push(e) }));
    expect(result.packedDir).toBe(path.join(result.modelDir, 'int4-g32'));
    expect(events.some((e) => e.type === 'progress' && e.phase === 'pack' && e.doneBytes === 4)).toBe(true);
    const [model] = await listPreparedModels(dataDir, { verify: true });
    expect(model).toMatchObject({ ready: true, groupSize: 32, packedDir: result.packedDir });
    expect(model?.manifest?.pack?.files.map((f) => f.path)).toContain('horizon-manifest.json');
    // Damaging a packed file makes the model not ready.
    fs.appendFileSync(path.join(result.packedDir!, 'model-qpacked-00001-of-00001.safetensors'), 'x');
    const [broken] = await listPreparedModels(dataDir);
    expect(broken?.ready).toBe(false);
    expect(broken?.problems.join()).toMatch(/model-qpacked-00001-of-00001\.safetensors: \d+ bytes, expected/);
  });

  it('measures the hash phase\'s rate on its own, not from the pack\'s bytes', async () => {
    const events: PrepEvent[] = [];
    await prepareModel(opts({ pack: true, packer: packer({ FAKE_PACKER_DELAY_MS: '30' }), onEvent: (e) => events.push(e) }));
    const progress = events.filter((e): e is Extract<PrepEvent, { type: 'progress' }> => e.type === 'progress');
    const firstHash = progress.findIndex((e) => e.phase === 'hash');
    // Emitted at once although a pack event came within the emit interval, with no rate yet: one sample of its own.
    expect(progress[firstHash]).toMatchObject({ doneBytes: 3, totalBytes: 4, bytesPerSec: 0, etaSec: null });
    expect(progress[firstHash - 1]).toMatchObject({ phase: 'pack', doneBytes: 4 });
  });

  it('restarts the pack after an abort mid-pack and never lists the half-packed model', async () => {
    const ac = new AbortController();
    const run = prepareModel(
      opts({
        pack: true,
        packer: packer({ FAKE_PACKER_DELAY_MS: '300' }),
        signal: ac.signal,
        onEvent: (e) => {
          if (e.type === 'progress' && e.phase === 'pack') ac.abort();
        },
      }),
    );
    await expectPrepError(run, 'CANCELLED', /pack .*cancelled/);
    expect((await listPreparedModels(dataDir)).filter((m) => m.ready)).toHaveLength(0);
    const packed = path.join(dataDir, 'models', 'test-org--tiny-olmoe', hub.repoInfo(TEST_REPO).commit, 'int4-g32');
    expect(fs.existsSync(path.join(packed, 'horizon-manifest.json'))).toBe(false);
    const before = hub.bytesSent();
    await prepareModel(opts({ pack: true, packer: packer() }));
    expect(hub.bytesSent()).toBe(before);
    expect((await listPreparedModels(dataDir, { verify: true }))[0]).toMatchObject({ ready: true, groupSize: 32 });
  });

  it('reports a packer failure with its error output', async () => {
    await expectPrepError(prepareModel(opts({ pack: true, packer: packer({ FAKE_PACKER_FAIL: '1' }) })), 'INTERNAL', /exit 3.*injected failure/);
    await expectPrepError(prepareModel(opts({ pack: true, packer: packer({ FAKE_PACKER_FAIL: 'ENOSPC' }) })), 'DISK_FULL', /int4-g32: the disk is full/);
    expect((await listPreparedModels(dataDir)).filter((m) => m.ready)).toHaveLength(0);
  });
});

describe('prepareModel keeps prepared.json truthful', () => {
  const packer = (env: Record<string, string> = {}) => ({ command: process.execPath, args: [FAKE_PACKER], env });
  const manifestOf = (): string => fs.readFileSync(path.join(dataDir, 'models', 'test-org--tiny-olmoe', hub.repoInfo(TEST_REPO).commit, 'prepared.json'), 'utf8');

  it.each([
    ['a pack with another group size fails', { pack: true }, { pack: true, groupSize: 16, packer: packer({ FAKE_PACKER_FAIL: '1' }) }, 'INTERNAL', 32],
    ['packing a --no-pack model fails', { pack: false }, { pack: true, packer: packer({ FAKE_PACKER_FAIL: '1' }) }, 'INTERNAL', null],
    ['a pack with another group size is cancelled', { pack: true }, { pack: true, groupSize: 16, packer: packer({ FAKE_PACKER_DELAY_MS: '300' }), cancelOnPack: true }, 'CANCELLED', 32],
  ] as const)('keeps a ready model when %s', async (_what, first, second, code, groupSize) => {
    await prepareModel(opts({ ...first, packer: packer() }));
    const before = manifestOf();
    const ac = new AbortController();
    const { cancelOnPack, ...rest } = { cancelOnPack: false, ...second };
    const run = prepareModel(
      opts({ ...rest, signal: ac.signal, onEvent: (e) => cancelOnPack && e.type === 'progress' && e.phase === 'pack' && ac.abort() }),
    );
    await expectPrepError(run, code, /./);
    expect(manifestOf()).toBe(before);
    expect(await listPreparedModels(dataDir, { verify: true })).toMatchObject([{ ready: true, groupSize }]);
  });

  it('switches variants, keeping the earlier packed folder for reuse', async () => {
    const argsOut = path.join(tempDir('args'), 'args.jsonl');
    await prepareModel(opts({ pack: true, packer: packer({ FAKE_PACKER_ARGS_OUT: argsOut }) }));
    const g16 = await prepareModel(opts({ pack: true, groupSize: 16, packer: packer({ FAKE_PACKER_ARGS_OUT: argsOut }) }));
    expect(g16.packedDir).toBe(path.join(g16.modelDir, 'int4-g16'));
    expect(await listPreparedModels(dataDir, { verify: true })).toMatchObject([{ ready: true, groupSize: 16 }]);
    expect(fs.existsSync(path.join(g16.modelDir, 'int4-g32', 'horizon-manifest.json'))).toBe(true);
    const g32 = await prepareModel(opts({ pack: true, groupSize: 32, packer: packer({ FAKE_PACKER_ARGS_OUT: argsOut }) }));
    expect(g32.manifest.pack?.groupSize).toBe(32);
    // Two packer runs, each told its group size; the third request reused int4-g32.
    const runs = fs.readFileSync(argsOut, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as string[]);
    expect(runs.map((a) => a[a.indexOf('--group-size') + 1])).toEqual(['32', '16']);
  });

  it('packs again with --verify when a packed file was changed in place', async () => {
    const first = await prepareModel(opts({ pack: true, packer: packer() }));
    const out = path.join(first.packedDir!, 'model-qpacked-00001-of-00001.safetensors');
    const bytes = fs.readFileSync(out);
    bytes[0] = bytes[0]! ^ 1;
    fs.writeFileSync(out, bytes);
    expect((await listPreparedModels(dataDir, { verify: true }))[0]?.ready).toBe(false);
    const events: PrepEvent[] = [];
    await prepareModel(opts({ pack: true, verify: true, packer: packer(), onEvent: (e) => events.push(e) }));
    expect(events.some((e) => e.type === 'progress' && e.phase === 'pack')).toBe(true);
    expect((await listPreparedModels(dataDir, { verify: true }))[0]).toMatchObject({ ready: true, groupSize: 32 });
  });

  it('drops prepared.json when a file it lists no longer verifies and cannot be fetched again', async () => {
    const first = await prepareModel(opts());
    const shard = path.join(first.modelDir, 'source', SHARD2);
    const bytes = fs.readFileSync(shard);
    bytes[bytes.length - 1] = bytes[bytes.length - 1]! ^ 0xff;
    fs.writeFileSync(shard, bytes);
    hub.faults.push({ kind: 'status', path: SHARD2, status: 503, times: 10 });
    await expectPrepError(prepareModel(opts({ verify: true, retries: 0 })), 'NETWORK', new RegExp(SHARD2));
    expect(fs.existsSync(first.manifestPath)).toBe(false);
  });
});

describe('prepareModel checks what the packer read against the verified sources', () => {
  const packer = (env: Record<string, string> = {}) => ({ command: process.execPath, args: [FAKE_PACKER], env });

  it('fetches again a source shard changed after it was verified, and packs it again', async () => {
    const first = await prepareModel(opts({ pack: false }));
    const shard = path.join(first.modelDir, 'source', SHARD1);
    const bytes = fs.readFileSync(shard);
    bytes[bytes.length - 100] = bytes[bytes.length - 100]! ^ 0x40;
    fs.writeFileSync(shard, bytes);
    const sent = hub.bytesSent(SHARD1);
    const events: PrepEvent[] = [];
    const result = await prepareModel(opts({ pack: true, packer: packer(), onEvent: (e) => events.push(e) }));
    expect(hub.bytesSent(SHARD1) - sent).toBe(bytes.length);
    expect(events.some((e) => e.type === 'warning' && e.message.includes(`source/${SHARD1} had sha256`) && e.message.includes('fetching it again'))).toBe(true);
    expect(fs.readFileSync(shard).equals(fs.readFileSync(path.join(repoDir, SHARD1)))).toBe(true);
    const hubSha = hub.repoInfo(TEST_REPO).files.find((f) => f.path === SHARD1)!.sha256;
    expect(result.manifest.source.files.find((f) => f.path === SHARD1)?.sha256).toBe(hubSha);
    const packed = JSON.parse(fs.readFileSync(path.join(result.packedDir!, 'horizon-manifest.json'), 'utf8')) as { source: { files: { path: string; sha256: string }[] } };
    expect(packed.source.files.find((f) => f.path === SHARD1)?.sha256).toBe(hubSha);
    expect((await listPreparedModels(dataDir, { verify: true }))[0]).toMatchObject({ ready: true, groupSize: 32 });
  });

  it('packs again instead of reusing a pack made from other source bytes', async () => {
    const first = await prepareModel(opts({ pack: true, packer: packer() }));
    const hm = path.join(first.packedDir!, 'horizon-manifest.json');
    const m = JSON.parse(fs.readFileSync(hm, 'utf8')) as { source: { files: { path: string; sha256: string }[] } };
    m.source.files.find((f) => f.path === SHARD2)!.sha256 = '0'.repeat(64);
    fs.writeFileSync(hm, JSON.stringify(m));
    fs.rmSync(first.manifestPath);
    const events: PrepEvent[] = [];
    await prepareModel(opts({ pack: true, packer: packer(), onEvent: (e) => events.push(e) }));
    expect(events.some((e) => e.type === 'progress' && e.phase === 'pack')).toBe(true);
    const repacked = JSON.parse(fs.readFileSync(hm, 'utf8')) as { source: { files: { path: string; sha256: string }[] } };
    expect(repacked.source.files.find((f) => f.path === SHARD2)?.sha256).toBe(hub.repoInfo(TEST_REPO).files.find((f) => f.path === SHARD2)!.sha256);
  });

  it('fails naming the file when the packer keeps reading other bytes, and keeps no pack', async () => {
    const zeros = '0'.repeat(64);
    const e = await expectPrepError(
      prepareModel(opts({ pack: true, packer: packer({ FAKE_PACKER_SOURCE_SHA: zeros }) })),
      'HASH_MISMATCH',
      new RegExp(`int4-g32: the packer read source files that do not verify: .*source/${SHARD1} had sha256 ${zeros} when packed, expected [0-9a-f]{64}`),
    );
    expect(e.message).toContain(`source/${SHARD2}`);
    const packedDir = path.join(dataDir, 'models', 'test-org--tiny-olmoe', hub.repoInfo(TEST_REPO).commit, 'int4-g32');
    expect(fs.existsSync(path.join(packedDir, 'horizon-manifest.json'))).toBe(false);
    expect((await listPreparedModels(dataDir)).filter((m) => m.ready)).toHaveLength(0);
  });
});

describe('prepareModel checks the tensors against config.json', () => {
  it('fails with MODEL_INVALID naming the shard and tensor when config.json sizes do not match them, before packing', async () => {
    const argsOut = path.join(tempDir('args'), 'args.jsonl');
    await expectPrepError(
      prepareModel(opts({ repo: 'test-org/config-mismatch', pack: true, packer: { command: process.execPath, args: [FAKE_PACKER], env: { FAKE_PACKER_ARGS_OUT: argsOut } } })),
      'MODEL_INVALID',
      // The shards download at once: the first one checked names its own layer's tensor.
      /config-mismatch@[0-9a-f]{12}\/(model-00001-of-00002\.safetensors: tensor 'model\.layers\.0|model-00002-of-00002\.safetensors: tensor 'model\.layers\.1)\.mlp\.experts\.0\.gate_proj\.weight' has shape \[32, 64\] but config\.json \(hidden_size 64, intermediate_size 64, .*\) needs \[64, 64\]/,
    );
    expect(fs.existsSync(argsOut)).toBe(false);
  });
});

describe('prepareModel cleans up', () => {
  it('removes temporary files that a dead process left in the model and source folders', async () => {
    const { commit } = hub.repoInfo(TEST_REPO);
    const modelDir = path.join(dataDir, 'models', 'test-org--tiny-olmoe', commit);
    const dead = spawnSync(process.execPath, ['-e', '0']).pid;
    fs.mkdirSync(path.join(modelDir, 'source'), { recursive: true });
    const left = [`source/${SHARD1}.tmp-${dead}`, `source/${SHARD2}.part.json.tmp-${dead}`, `prepared.json.tmp-${dead}`];
    for (const rel of left) fs.writeFileSync(path.join(modelDir, rel), Buffer.alloc(10_000, 1));
    const live = `source/${SHARD2}.tmp-${process.ppid}`;
    fs.writeFileSync(path.join(modelDir, live), 'x');
    await prepareModel(opts());
    for (const rel of left) expect(fs.existsSync(path.join(modelDir, rel)), rel).toBe(false);
    expect(fs.existsSync(path.join(modelDir, live))).toBe(true);
  });

  const shm = '/dev/shm';
  const otherDevice = fs.existsSync(shm) && fs.statSync(shm).dev !== fs.statSync(os.tmpdir()).dev;
  it.skipIf(!otherDevice)(`counts HF-cache shards that must be copied from another device as needed space${otherDevice ? '' : ' (skipped: no /dev/shm on another device)'}`, async () => {
    const { commit, files } = hub.repoInfo(TEST_REPO);
    const mkCache = (root: string): string => {
      const snap = path.join(root, 'models--test-org--tiny-olmoe', 'snapshots', commit);
      fs.mkdirSync(snap, { recursive: true });
      for (const f of files) fs.copyFileSync(path.join(repoDir, f.path), path.join(snap, f.path));
      return root;
    };
    const far = mkCache(fs.mkdtempSync(path.join(shm, 'horizon-hfcache-')));
    try {
      const shardBytes = files.filter((f) => f.path.endsWith('.safetensors')).reduce((a, f) => a + f.size, 0);
      const statfs = async () => ({ bavail: shardBytes - 1, bsize: 1 });
      await expectPrepError(prepareModel(opts({ hfCacheDir: far, statfs })), 'DISK_FULL', /not enough free disk space/);
      const near = mkCache(tempDir('hfcache'));
      await prepareModel(opts({ dataDir: tempDir('data'), hfCacheDir: near, statfs: async () => ({ bavail: 1, bsize: 1 }) }));
    } finally {
      fs.rmSync(far, { recursive: true, force: true });
    }
  });
});

describe('prepareModel --verify on a prepared model', () => {
  it('ends CANCELLED when cancelled while it re-hashes', async () => {
    await prepareModel(opts({ pack: true, packer: { command: process.execPath, args: [FAKE_PACKER] } }));
    const ac = new AbortController();
    const abortAfterListing: typeof fetch = async (input, init) => {
      const res = await fetch(input, init);
      if (!String(input instanceof Request ? input.url : input).includes('/tree/') || /rel="next"/.test(res.headers.get('link') ?? '')) return res;
      const body = await res.text();
      setImmediate(() => ac.abort());
      return new Response(body, { status: res.status, headers: res.headers });
    };
    const events: PrepEvent[] = [];
    await expectPrepError(
      prepareModel(opts({ pack: true, verify: true, signal: ac.signal, fetch: abortAfterListing, onEvent: (e) => events.push(e) })),
      'CANCELLED',
      /verification cancelled/,
    );
    expect(events.some((e) => e.type === 'done')).toBe(false);
  });
});
