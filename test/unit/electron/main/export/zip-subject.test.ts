import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { PERF_FORMAT } from '../../../../../electron/common/perf-campaign.js';
import { migrate } from '../../../../../electron/main/db/open-database.js';
import { readZipEntries } from '../../../../../electron/main/export/verify-result-zip.js';
import { writeResultZip } from '../../../../../electron/main/export/write-result-zip.js';
import { zipCutCount, zipSubject } from '../../../../../electron/main/export/zip-subject.js';
import { loadTextTools } from '../../../../../evals/ifeval/node/load-text-tools.js';
import { writeElsewhereCampaignZip } from './perf-fixtures.js';
import { storeRun } from './zip-fixtures.js';

const SHARED = path.resolve(import.meta.dirname, '..', '..', '..', '..', '..', '..', 'shared');
const INPUT = `${JSON.stringify({ key: 1000, prompt: 'Say hi.', instruction_id_list: ['punctuation:no_comma'], kwargs: [{}] })}\n`;

const entriesOf = (files: Record<string, unknown>): Map<string, Buffer> =>
  new Map(Object.entries(files).map(([name, json]) => [name, Buffer.from(typeof json === 'string' ? json : JSON.stringify(json))]));

describe('zipSubject', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'horizon-zip-subject-'));
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it("reads a written result ZIP's run as its database row holds it", async () => {
    const db = new Database(':memory:');
    migrate(db);
    const tools = await loadTextTools({ punktDir: path.join(SHARED, 'nltk', 'punkt_english') });
    const { runs, responses } = storeRun(db, 'run-subject', INPUT, 1, ['Hi.'], tools, 'completed');
    runs.setLabel('run-subject', 'baseline g32');
    const row = runs.require('run-subject');
    const zip = path.join(dir, 'result.zip');
    await writeResultZip({ runs, responses, inputDataText: INPUT, tools }, 'run-subject', zip);
    db.close();
    expect(zipSubject(await readZipEntries(zip))).toEqual({
      kind: 'result',
      subject: {
        id: 'run-subject', label: 'baseline g32', modelRepo: row.modelRepo, modelRevision: row.modelRevision, modelId: row.modelId,
        weights: row.weights, backendLabel: 'CPU backend', createdAt: row.createdAt,
      },
    });
  });

  it("reads a written campaign ZIP's campaign.json", async () => {
    const zip = path.join(dir, 'campaign.zip');
    await writeElsewhereCampaignZip('perf-20261206-cd34', zip, { label: 'driver 580' });
    expect(zipSubject(await readZipEntries(zip))).toEqual({
      kind: 'campaign',
      subject: {
        id: 'perf-20261206-cd34', label: 'driver 580', modelRepo: 'o/m', modelRevision: 'a'.repeat(40), modelId: 'm@abc/int4-g32',
        weights: 'int4', backendLabel: 'CPU backend', createdAt: '2026-12-06T10:00:00.000Z',
      },
    });
  });

  const none = { id: null, label: null, modelRepo: null, modelRevision: null, modelId: null, weights: null, backendLabel: null, createdAt: null };
  const run = { id: 'r1', createdAt: '2026-12-06T10:00:00.000Z' };
  const model = { id: 'o--m@aaaaaaa/int4-g64', repo: 'o/m', revision: 'main', weights: 'int4' };
  it.each<[string, Record<string, unknown>, { kind: 'result' | 'campaign'; subject: Record<string, unknown> } | null]>([
    ['no manifest.json', {}, null],
    ['a manifest that is not JSON', { 'manifest.json': '{"run": ' }, null],
    ['a manifest that is a list', { 'manifest.json': [] }, null],
    ['a manifest without its run', { 'manifest.json': { format: 'horizon-result-v2' } }, { kind: 'result', subject: none }],
    [
      'a CUDA run',
      { 'manifest.json': { run, model, backend: { backend: 'cuda', device: 'NVIDIA H200' } } },
      { kind: 'result', subject: { ...none, id: 'r1', createdAt: run.createdAt, modelRepo: 'o/m', modelRevision: 'main', modelId: model.id, weights: 'int4', backendLabel: 'CUDA: NVIDIA H200' } },
    ],
    // Earlier builds wrote the backend as 'CPU' / 'CUDA'.
    ['an earlier build\'s "CUDA"', { 'manifest.json': { backend: { backend: 'CUDA', device: 'RTX 4090' } } }, { kind: 'result', subject: { ...none, backendLabel: 'CUDA: RTX 4090' } }],
    ['an earlier build\'s "CPU"', { 'manifest.json': { backend: { backend: 'CPU', device: 'CPU' } } }, { kind: 'result', subject: { ...none, backendLabel: 'CPU backend' } }],
    ['a CUDA run without its device', { 'manifest.json': { backend: { backend: 'cuda' } } }, { kind: 'result', subject: none }],
    ['a backend it does not know', { 'manifest.json': { backend: { backend: 'metal', device: 'M3' } } }, { kind: 'result', subject: none }],
    [
      'fields of the wrong type, a label the app would not store, a time that is not one',
      { 'manifest.json': { run: { id: 7, label: 'two\nlines', createdAt: 'yesterday' }, model: { repo: ['o/m'], revision: '', weights: 'int8' } } },
      { kind: 'result', subject: none },
    ],
    [
      'a campaign ZIP whose campaign.json is missing',
      { 'manifest.json': { format: PERF_FORMAT } },
      null,
    ],
    [
      'a campaign ZIP',
      { 'manifest.json': { format: PERF_FORMAT }, 'campaign.json': { id: 'perf-1', label: ' padded ', backend: 'cuda', deviceLabel: 'NVIDIA H100', model: { modelId: 'x', weights: 'bf16' } } },
      { kind: 'campaign', subject: { ...none, id: 'perf-1', modelId: 'x', weights: 'bf16', backendLabel: 'CUDA: NVIDIA H100' } },
    ],
  ])('%s', (_name, files, expected) => {
    expect(zipSubject(entriesOf(files))).toEqual(expected);
  });
});

describe('zipCutCount', () => {
  const line = (finish: unknown) => JSON.stringify({ key: 1, prompt: 'p', response: 'r', finish_reason: finish });
  const lines = (...finishes: unknown[]) => `${finishes.map(line).join('\n')}\n`;
  const manifest = { policy: { maxNewTokens: 1280 } };
  it.each<[string, Record<string, unknown>, ReturnType<typeof zipCutCount>]>([
    ['two cut of four', { 'manifest.json': manifest, 'responses.jsonl': lines('stop', 'length', 'length', 'cancelled') }, { cut: 2, of: 4, maxNewTokens: 1280 }],
    ['none cut, a blank line left out', { 'manifest.json': manifest, 'responses.jsonl': `${lines('stop')}\n` }, { cut: 0, of: 1, maxNewTokens: 1280 }],
    ['no responses', { 'manifest.json': manifest, 'responses.jsonl': '' }, { cut: 0, of: 0, maxNewTokens: 1280 }],
    ['no responses.jsonl', { 'manifest.json': manifest }, null],
    ['a finish reason it does not know', { 'manifest.json': manifest, 'responses.jsonl': lines('stop', 'eos') }, null],
    ['a line without one', { 'manifest.json': manifest, 'responses.jsonl': lines('stop', undefined) }, null],
    ['a line that is not JSON', { 'manifest.json': manifest, 'responses.jsonl': '{"finish_reason": "stop"\n' }, null],
    ['no cap', { 'manifest.json': {}, 'responses.jsonl': lines('stop') }, null],
    ['a cap that is not a count', { 'manifest.json': { policy: { maxNewTokens: 12.5 } }, 'responses.jsonl': lines('stop') }, null],
  ])('%s', (_name, files, expected) => {
    expect(zipCutCount(entriesOf(files))).toEqual(expected);
  });
});
