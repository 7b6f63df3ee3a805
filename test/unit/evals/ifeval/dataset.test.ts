// Validation of input and responses files. To add a case: append [description, file text, error pattern].
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { afterAll, describe, expect, it } from 'vitest';

import { DatasetError, parsePromptRecords, parseResponses } from '../../../../evals/ifeval/dataset.js';
import { loadPromptRecords, loadResponses } from '../../../../evals/ifeval/node/dataset.js';

const SHARED = path.resolve(import.meta.dirname, '..', '..', '..', '..', '..', 'shared');
const OFFICIAL = path.join(SHARED, 'ifeval', 'input_data.jsonl');
const tmp = mkdtempSync(path.join(os.tmpdir(), 'ifeval-dataset-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const row = (o: Record<string, unknown>): string =>
  JSON.stringify({ key: 1, prompt: 'p', instruction_id_list: ['punctuation:no_comma'], kwargs: [{}], ...o });

describe('parsePromptRecords', () => {
  it('parses rows and drops null kwargs', () => {
    const text = `${row({ instruction_id_list: ['detectable_format:title', 'keywords:existence'], kwargs: [{ keywords: null }, { keywords: ['x'], num_words: null }] })}\n`;
    expect(parsePromptRecords(text, 'in.jsonl')).toEqual([
      { key: 1, prompt: 'p', instruction_id_list: ['detectable_format:title', 'keywords:existence'], kwargs: [{}, { keywords: ['x'] }] },
    ]);
  });

  it.each([
    ['truncated JSON', `${row({})}\n{"key": 2, "prompt": "q", "instr`, /^in\.jsonl:2: invalid JSON/],
    ['blank line', `${row({})}\n\n${row({ key: 2 })}\n`, /^in\.jsonl:2: empty line/],
    ['unknown id', row({ instruction_id_list: ['keywords:key_sentences'] }), /^in\.jsonl:1: unknown instruction id "keywords:key_sentences"/],
    ['duplicate key', `${row({})}\n${row({ prompt: 'q' })}`, /^in\.jsonl:2: duplicate key 1 \(first on line 1\)/],
    ['kwargs misfit', row({ kwargs: [{ x: 1 }] }), /^in\.jsonl:1: key 1: punctuation:no_comma: unknown kwarg 'x'/],
    ['length mismatch', row({ kwargs: [] }), /^in\.jsonl:1: 1 instruction ids but 0 kwargs objects/],
    ['non-integer key', row({ key: '1' }), /^in\.jsonl:1: "key" must be an integer/],
    ['not an object', '[1, 2]', /^in\.jsonl:1: a row must be a JSON object/],
  ])('rejects %s', (_name, text, message) => {
    expect(() => parsePromptRecords(text, 'in.jsonl')).toThrow(message);
    expect(() => parsePromptRecords(text, 'in.jsonl')).toThrow(DatasetError);
  });
});

describe('parseResponses', () => {
  it('maps prompt to response and ignores other fields', () => {
    const text = '{"prompt": "a", "response": "x", "model": "m"}\n{"prompt": "b", "response": ""}\n';
    expect([...parseResponses(text, 'r.jsonl')]).toEqual([
      ['a', 'x'],
      ['b', ''],
    ]);
  });

  it.each([
    ['duplicate prompt', '{"prompt": "a", "response": "x"}\n{"prompt": "a", "response": "y"}', /^r\.jsonl:2: duplicate prompt/],
    ['missing response', '{"prompt": "a"}', /^r\.jsonl:1: "response" must be a string/],
    ['truncated', '{"prompt": "a", "resp', /^r\.jsonl:1: invalid JSON/],
  ])('rejects %s', (_name, text, message) => {
    expect(() => parseResponses(text, 'r.jsonl')).toThrow(message);
  });
});

describe('loadPromptRecords', () => {
  it('loads the official set (sha256 checked)', async () => {
    const records = await loadPromptRecords(OFFICIAL, { expectOfficial: true });
    expect(records).toHaveLength(541);
    expect(records.reduce((n, r) => n + r.instruction_id_list.length, 0)).toBe(834);
  });

  it('rejects an edited 541-row file unless the official check is off', async () => {
    const edited = path.join(tmp, 'edited.jsonl');
    writeFileSync(edited, readFileSync(OFFICIAL, 'utf8').replace('Write a 300+ word summary', 'Write a 301+ word summary'));
    await expect(loadPromptRecords(edited)).rejects.toThrow(/edited\.jsonl: sha256 [0-9a-f]{64} is not the official/);
    await expect(loadPromptRecords(edited, { expectOfficial: false })).resolves.toHaveLength(541);
  });

  it('does not require the official hash for a subset, unless asked', async () => {
    const subset = path.join(tmp, 'subset.jsonl');
    writeFileSync(subset, readFileSync(OFFICIAL, 'utf8').split('\n').slice(0, 3).join('\n'));
    await expect(loadPromptRecords(subset)).resolves.toHaveLength(3);
    await expect(loadPromptRecords(subset, { expectOfficial: true })).rejects.toThrow(/not the official/);
  });

  it('names a file it cannot read', async () => {
    await expect(loadPromptRecords(path.join(tmp, 'nope.jsonl'))).rejects.toThrow(/nope\.jsonl: cannot read \(ENOENT\)/);
    await expect(loadResponses(path.join(tmp, 'nope.jsonl'))).rejects.toThrow(/nope\.jsonl: cannot read/);
  });
});
