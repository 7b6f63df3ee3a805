import fs from 'node:fs';
import path from 'node:path';

import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';

import {
  downloadIfevalData,
  downloadPunkt,
  evalAssetsStatus,
  importIfevalData,
  importPunkt,
  PUNKT_ENGLISH_FILES,
} from '../../../../../electron/main/prep/eval-assets.js';
import { PrepError } from '../../../../../electron/main/prep/prep-error.js';
import { partHolds, startHubServer, type HubServer } from '../../../../fixtures/hub-server.js';
import { removeTempDirs, tempDir } from './test-repo.js';

const SHARED = path.resolve(import.meta.dirname, '..', '..', '..', '..', '..', '..', 'shared');
const IFEVAL = path.join(SHARED, 'ifeval', 'input_data.jsonl');
const PUNKT = path.join(SHARED, 'nltk', 'punkt_english');

let hub: HubServer;
let dataDir: string;
let tabDir: string;

beforeAll(async () => {
  tabDir = tempDir('punkt-tab');
  fs.cpSync(PUNKT, path.join(tabDir, 'english'), { recursive: true });
  fs.mkdirSync(path.join(tabDir, 'german'));
  fs.writeFileSync(path.join(tabDir, 'german', 'abbrev_types.txt'), 'bzw\n');
  const noEnglish = tempDir('punkt-de');
  fs.cpSync(path.join(tabDir, 'german'), path.join(noEnglish, 'german'), { recursive: true });
  hub = await startHubServer({
    repos: {},
    assets: {
      '/ifeval/input_data.jsonl': { file: IFEVAL },
      '/nltk/punkt_tab.zip': { zipDir: tabDir, prefix: 'punkt_tab' },
      '/nltk/german_only.zip': { zipDir: noEnglish, prefix: 'punkt_tab' },
      '/nltk/punkt_english.zip': { zipDir: PUNKT, prefix: 'punkt_english' },
      '/ifeval/wrong.jsonl': { bytes: Buffer.from('{"key": 1}\n') },
    },
  });
});

afterAll(async () => {
  removeTempDirs();
  await hub.close();
});

beforeEach(() => {
  dataDir = tempDir('assets');
  hub.faults.length = 0;
});

async function rejection(p: Promise<unknown>): Promise<PrepError> {
  const e = await p.then(
    () => undefined,
    (x: unknown) => x,
  );
  expect(e).toBeInstanceOf(PrepError);
  return e as PrepError;
}

describe('eval assets', () => {
  it('downloads both assets from configurable URLs, verifies them, and does not fetch twice', async () => {
    expect(await evalAssetsStatus(dataDir)).toMatchObject({ ifeval: { ready: false }, punkt: { ready: false } });
    const ifeval = await downloadIfevalData({ dataDir, url: `${hub.url}/ifeval/input_data.jsonl` });
    const punkt = await downloadPunkt({ dataDir, url: `${hub.url}/nltk/punkt_tab.zip` });
    expect(ifeval).toBe(path.join(dataDir, 'assets', 'ifeval', 'input_data.jsonl'));
    expect(punkt).toBe(path.join(dataDir, 'assets', 'nltk', 'punkt_english'));
    expect(fs.readdirSync(punkt).sort()).toEqual(Object.keys(PUNKT_ENGLISH_FILES).sort());
    expect(fs.readFileSync(path.join(punkt, 'collocations.tab')).equals(fs.readFileSync(path.join(PUNKT, 'collocations.tab')))).toBe(true);
    expect(fs.existsSync(path.join(dataDir, 'assets', 'nltk', 'punkt_tab.zip'))).toBe(false);
    const status = await evalAssetsStatus(dataDir);
    expect(status.ifeval.ready && status.punkt.ready).toBe(true);
    const before = hub.bytesSent();
    await downloadIfevalData({ dataDir, url: `${hub.url}/ifeval/input_data.jsonl` });
    await downloadPunkt({ dataDir, url: `${hub.url}/nltk/punkt_tab.zip` });
    expect(hub.bytesSent()).toBe(before);
  });

  it('resumes an interrupted IFEval download with a Range request', async () => {
    hub.faults.push({ kind: 'drop', path: '/ifeval/input_data.jsonl', afterBytes: 100_000, holdUntil: partHolds(dataDir, 'input_data.jsonl', 100_000) });
    await downloadIfevalData({ dataDir, url: `${hub.url}/ifeval/input_data.jsonl`, backoffMs: 1 });
    expect(hub.requests.filter((r) => r.url === '/ifeval/input_data.jsonl').at(-1)?.range).toBe('bytes=100000-');
    expect((await evalAssetsStatus(dataDir)).ifeval.ready).toBe(true);
  });

  it('rejects a download whose size differs from the pinned one as a network error, after retrying', async () => {
    const e = await rejection(downloadIfevalData({ dataDir, url: `${hub.url}/ifeval/wrong.jsonl`, retries: 2, backoffMs: 1 }));
    expect(e.code).toBe('NETWORK');
    expect(e.message).toMatch(/IFEval input_data\.jsonl: network error after 2 retries \(the server answered HTTP 200 (\(.*\) )?for a file of 11 bytes, expected 207111\)/);
    expect((await evalAssetsStatus(dataDir)).ifeval.ready).toBe(false);
  });

  it('imports IFEval from a local file and refuses a different file', async () => {
    expect(await importIfevalData(dataDir, IFEVAL)).toBe(path.join(dataDir, 'assets', 'ifeval', 'input_data.jsonl'));
    expect((await evalAssetsStatus(dataDir)).ifeval.ready).toBe(true);
    const other = path.join(tempDir('other'), 'input_data.jsonl');
    fs.writeFileSync(other, '{}\n');
    const e = await rejection(importIfevalData(tempDir('assets'), other));
    expect(e.code).toBe('HASH_MISMATCH');
    expect(e.message).toContain(other);
  });

  it('imports Punkt from a folder of the four files, from punkt_tab/english, and from the zip', async () => {
    await importPunkt(dataDir, PUNKT);
    expect((await evalAssetsStatus(dataDir)).punkt.ready).toBe(true);
    const d2 = tempDir('assets');
    await importPunkt(d2, tabDir);
    expect((await evalAssetsStatus(d2)).punkt.ready).toBe(true);
    const zipFile = path.join(tempDir('zip'), 'punkt_tab.zip');
    fs.writeFileSync(zipFile, Buffer.from(await (await fetch(`${hub.url}/nltk/punkt_tab.zip`)).arrayBuffer()));
    const d3 = tempDir('assets');
    await importPunkt(d3, zipFile);
    expect((await evalAssetsStatus(d3)).punkt).toMatchObject({ ready: true, missing: [] });
    // A zip of the folder of the four files itself (not NLTK's layout).
    const folderZip = path.join(tempDir('zip'), 'punkt_english.zip');
    fs.writeFileSync(folderZip, Buffer.from(await (await fetch(`${hub.url}/nltk/punkt_english.zip`)).arrayBuffer()));
    const d4 = tempDir('assets');
    await importPunkt(d4, folderZip);
    expect((await evalAssetsStatus(d4)).punkt).toMatchObject({ ready: true, missing: [] });
  });

  it('refuses a tampered Punkt file and a zip without English', async () => {
    const bad = tempDir('bad-punkt');
    fs.cpSync(PUNKT, bad, { recursive: true });
    fs.appendFileSync(path.join(bad, 'sent_starters.txt'), 'extra\n');
    const e = await rejection(importPunkt(dataDir, bad));
    expect(e.code).toBe('HASH_MISMATCH');
    expect(e.message).toMatch(/english\/sent_starters\.txt is not the pinned Punkt file/);
    expect(fs.existsSync(path.join(dataDir, 'assets', 'nltk', 'punkt_english', 'abbrev_types.txt'))).toBe(false);
    const e2 = await rejection(downloadPunkt({ dataDir, url: `${hub.url}/nltk/german_only.zip` }));
    expect(e2.code).toBe('NOT_FOUND');
    expect(e2.message).toMatch(/the zip has no folder holding all of the Punkt English files \(abbrev_types\.txt, /);
  });
});
