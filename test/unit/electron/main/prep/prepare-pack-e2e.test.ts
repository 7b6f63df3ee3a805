// End to end with the real packer: local hub → prepareModel (download, verify, `horizon pack` in a child process) →
// listPreparedModels ready → `horizon logits --weights int4` runs on the packed folder. Needs the native addon.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { listPreparedModels } from '../../../../../electron/main/prep/list-prepared-models.js';
import { REPO_ROOT } from '../../../../../electron/node/app-root.js';
import { prepareModel } from '../../../../../electron/main/prep/prepare-model.js';
import type { PrepEvent } from '../../../../../electron/main/prep/prep-events.js';
import { loadNativeBinding } from '../../../../../electron/worker/runtime/binding.js';
import { startHubServer, type HubServer } from '../../../../fixtures/hub-server.js';
import { makeTestRepo, removeTempDirs, tempDir, TEST_REPO } from './test-repo.js';

function addonReason(): string | undefined {
  try {
    const b = loadNativeBinding() as unknown as Record<string, unknown>;
    return typeof b.pack === 'function' && typeof b.loadModel === 'function' ? undefined : 'the built native addon has no pack/loadModel (rebuild it)';
  } catch (error) {
    return (error as Error).message;
  }
}
const skipReason = addonReason();

let hub: HubServer;

beforeAll(async () => {
  if (skipReason) return;
  hub = await startHubServer({ repos: { [TEST_REPO]: { dir: await makeTestRepo(tempDir('e2e-repo'), 7) } } });
});

afterAll(async () => {
  removeTempDirs();
  await hub?.close();
});

describe.skipIf(skipReason !== undefined)(`prepare → pack → logits with the real packer${skipReason ? ` (skipped: ${skipReason})` : ''}`, () => {
  it('prepares, packs, lists the model ready and runs logits on the INT4 folder', async () => {
    const dataDir = tempDir('e2e-data');
    const events: PrepEvent[] = [];
    const result = await prepareModel({ repo: TEST_REPO, dataDir, hubUrl: hub.url, hfCacheDir: null, onEvent: (e) => events.push(e) });
    const commit = hub.repoInfo(TEST_REPO).commit;
    expect(result.packedDir).toBe(path.join(dataDir, 'models', 'test-org--tiny-olmoe', commit, 'int4-g32'));
    expect(events.some((e) => e.type === 'progress' && e.phase === 'pack')).toBe(true);
    const hm = JSON.parse(fs.readFileSync(path.join(result.packedDir!, 'horizon-manifest.json'), 'utf8')) as {
      format: string;
      group_size: number;
      source: { repo: string | null; revision: string | null };
    };
    expect(hm).toMatchObject({ format: 'qpacked-v2', group_size: 32, source: { repo: TEST_REPO, revision: commit } });
    const [model] = await listPreparedModels(dataDir, { verify: true });
    expect(model).toMatchObject({ ready: true, groupSize: 32, packedDir: result.packedDir });
    expect(model?.manifest?.pack?.files.some((f) => /^model-qpacked-\d{5}-of-\d{5}\.safetensors$/.test(f.path))).toBe(true);

    const out = path.join(tempDir('e2e-logits'), 'logits.json');
    await promisify(execFile)(process.execPath, [
      path.join(REPO_ROOT, 'scripts', 'horizon.mjs'),
      'logits', '--model', result.packedDir!, '--weights', 'int4', '--tokens', '1,2,3', '--out', out,
    ]);
    expect(fs.statSync(out).size).toBeGreaterThan(0);
  });
});
