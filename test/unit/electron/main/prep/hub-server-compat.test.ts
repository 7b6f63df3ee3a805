// The local hub fixture must speak what @huggingface/hub itself expects, since the app's browser tests drive the real
// client against it: revision → sha, paged tree listing, paths-info, resolve with the Range probe and ETags.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

import { downloadFile, fileDownloadInfo, listFiles, modelInfo, pathsInfo } from '@huggingface/hub';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { startHubServer, type HubServer } from '../../../../fixtures/hub-server.js';
import { makeTestRepo, removeTempDirs, tempDir, TEST_REPO } from './test-repo.js';

let hub: HubServer;
let repoDir: string;

beforeAll(async () => {
  repoDir = await makeTestRepo(tempDir('compat'));
  hub = await startHubServer({ repos: { [TEST_REPO]: { dir: repoDir } }, pageSize: 2 });
});
afterAll(async () => {
  removeTempDirs();
  await hub.close();
});

describe('hub-server with the @huggingface/hub client', () => {
  it('resolves the revision and lists every file across Link pages', async () => {
    const info = await modelInfo({ name: TEST_REPO, hubUrl: hub.url, additionalFields: ['sha'] });
    expect((info as { sha?: string }).sha).toBe(hub.repoInfo(TEST_REPO).commit);
    const files = [];
    for await (const f of listFiles({ repo: TEST_REPO, recursive: true, hubUrl: hub.url })) files.push(f);
    expect(files.map((f) => f.path).sort()).toEqual(fs.readdirSync(repoDir).sort());
    const shard = files.find((f) => f.path.endsWith('.safetensors'))!;
    const sha256 = createHash('sha256').update(fs.readFileSync(path.join(repoDir, shard.path))).digest('hex');
    expect(shard.lfs?.oid).toBe(sha256);
    const cfg = files.find((f) => f.path === 'config.json')!;
    const bytes = fs.readFileSync(path.join(repoDir, 'config.json'));
    expect(cfg.oid).toBe(createHash('sha1').update(`blob ${bytes.length}\0`).update(bytes).digest('hex'));
    expect(hub.requests.filter((r) => r.url.includes('/tree/')).length).toBeGreaterThan(3);
  });

  it('answers paths-info, the resolve probe and a client download', async () => {
    const infos = await pathsInfo({ repo: TEST_REPO, paths: ['config.json', 'missing.txt'], hubUrl: hub.url });
    expect(infos.map((i) => i.path)).toEqual(['config.json']);
    const dl = await fileDownloadInfo({ repo: TEST_REPO, path: 'model-00001-of-00002.safetensors', hubUrl: hub.url });
    expect(dl?.size).toBe(fs.statSync(path.join(repoDir, 'model-00001-of-00002.safetensors')).size);
    expect(hub.requests.at(-1)?.range).toBe('bytes=0-0');
    const blob = await downloadFile({ repo: TEST_REPO, path: 'tokenizer_config.json', hubUrl: hub.url });
    expect(Buffer.from(await blob!.arrayBuffer())).toEqual(fs.readFileSync(path.join(repoDir, 'tokenizer_config.json')));
  });
});
