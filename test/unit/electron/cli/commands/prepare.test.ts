import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { startHubServer, type HubServer } from '../../../../fixtures/hub-server.js';
import { makeTestRepo, removeTempDirs, tempDir, TEST_REPO } from '../../main/prep/test-repo.js';

const run = promisify(execFile);
const ROOT = path.resolve(import.meta.dirname, '..', '..', '..', '..', '..');
const CLI = path.join(ROOT, 'scripts', 'horizon.mjs');
const SHARED = path.resolve(ROOT, '..', 'shared');

let hub: HubServer;

beforeAll(async () => {
  hub = await startHubServer({
    repos: { [TEST_REPO]: { dir: await makeTestRepo(tempDir('cli-repo')) }, 'test-org/gated': { dir: await makeTestRepo(tempDir('cli-gated')), gated: { token: 'hf_right' } } },
    assets: { '/ifeval/input_data.jsonl': { file: path.join(SHARED, 'ifeval', 'input_data.jsonl') } },
  });
});

afterAll(async () => {
  removeTempDirs();
  await hub.close();
});

async function horizon(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, [CLI, ...args], { env: { ...process.env, HF_HUB_CACHE: tempDir('nocache') } });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const e = error as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

describe('horizon prepare / assets', () => {
  it('prepares a model with --no-pack, printing progress and file lines', async () => {
    const dir = tempDir('cli-data');
    const { code, stdout } = await horizon(['prepare', '--model', `${TEST_REPO}@main`, '--dir', dir, '--hub-url', hub.url, '--no-pack']);
    const commit = hub.repoInfo(TEST_REPO).commit;
    expect(code).toBe(0);
    expect(stdout).toContain(`resolved ${TEST_REPO} to commit ${commit}`);
    expect(stdout).toMatch(/download +100\.0%/);
    expect(stdout).toMatch(/ok model-00001-of-00002\.safetensors \(.*downloaded\) sha256 [0-9a-f]{64}/);
    expect(fs.existsSync(path.join(dir, 'models', 'test-org--tiny-olmoe', commit, 'prepared.json'))).toBe(true);
    // --data-dir, as every command spells it, and --dir, prepare's first spelling, name the same folder.
    const listed = await horizon(['prepare', '--list', '--data-dir', dir, '--verify']);
    expect(listed.code).toBe(0);
    expect(listed.stdout).toContain(`ready     ${TEST_REPO}@${commit} ${path.join(dir, 'models', 'test-org--tiny-olmoe', commit, 'source')}`);
    const json = await horizon(['prepare', '--list', '--dir', dir, '--json']);
    expect(json.code).toBe(0);
    expect(json.stdout.trim().split('\n').map((l) => JSON.parse(l) as unknown)).toEqual([
      expect.objectContaining({ type: 'model', repo: TEST_REPO, commit, ready: true }),
    ]);
    // A file changed since: not ready, and the listing exits 1.
    fs.appendFileSync(path.join(dir, 'models', 'test-org--tiny-olmoe', commit, 'source', 'model-00001-of-00002.safetensors'), 'x');
    const changed = await horizon(['prepare', '--list', '--data-dir', dir, '--verify']);
    expect(changed.code).toBe(1);
    expect(changed.stdout).toMatch(new RegExp(`^not ready ${TEST_REPO}@${commit} .* \\(.+\\)$`, 'm'));
    const changedJson = await horizon(['prepare', '--list', '--data-dir', dir, '--verify', '--json']);
    expect(changedJson.code).toBe(1);
    expect(JSON.parse(changedJson.stdout.trim())).toMatchObject({ type: 'model', repo: TEST_REPO, ready: false });
    expect(await horizon(['prepare', '--list', '--data-dir', tempDir('cli-empty')])).toMatchObject({ code: 0, stdout: 'no prepared models\n' });
    // --json prints events only: every line is one.
    const again = await horizon(['prepare', '--model', `${TEST_REPO}@main`, '--dir', dir, '--hub-url', hub.url, '--no-pack', '--json']);
    expect(again.code).toBe(0);
    expect(again.stdout.trim().split('\n').map((l) => (JSON.parse(l) as { type: string }).type)).toContain('done');
  });

  it('exits 1 with a clear message for an unknown repo', async () => {
    const { code, stderr } = await horizon(['prepare', '--model', 'test-org/missing', '--dir', tempDir('cli-data'), '--hub-url', hub.url]);
    expect(code).toBe(1);
    expect(stderr).toMatch(/horizon prepare: test-org\/missing@main: model repo 'test-org\/missing' not found/);
  });

  it('tells where a gated repo takes its token, which the app does not need to hear', async () => {
    const { code, stderr } = await horizon(['prepare', '--model', 'test-org/gated', '--dir', tempDir('cli-data'), '--hub-url', hub.url]);
    expect(code).toBe(1);
    expect(stderr).toMatch(/the repository is gated or private \(HTTP 401\); it needs an access token \(--token or HF_TOKEN\)\n$/);
  });

  it('imports and reports the eval assets', async () => {
    const dir = tempDir('cli-assets');
    const partial = await horizon(['assets', '--dir', dir, '--import-ifeval', path.join(SHARED, 'ifeval', 'input_data.jsonl')]);
    expect(partial.code).toBe(1);
    expect(partial.stdout).toMatch(/ifeval +ready/);
    expect(partial.stdout).toMatch(/punkt +missing/);
    const full = await horizon(['assets', '--data-dir', dir, '--import-punkt', path.join(SHARED, 'nltk', 'punkt_english')]);
    expect(full.code).toBe(0);
    expect(full.stdout).toMatch(/punkt +ready/);
  });
});
