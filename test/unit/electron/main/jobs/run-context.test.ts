import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { CONTEXT_STEP, runContextTokens } from '../../../../../electron/main/jobs/run-context.js';
import { EOS_ID, writeTinyTokenizer } from '../../worker/tiny-tokenizer.js';

// The tiny tokenizer is byte-level without merges, so the chat form of an ASCII prompt p,
// "<|endoftext|><|user|>\n" + p + "\n<|assistant|>\n", is 3 special tokens + p.length + 3 newlines.
const chatTokens = (p: string) => 3 + p.length + 3;

describe('runContextTokens', () => {
  let dir: string;
  let capped: string;

  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'horizon-ctx-'));
    await writeTinyTokenizer(dir);
    capped = path.join(dir, 'capped');
    await writeTinyTokenizer(capped);
    await writeFile(path.join(capped, 'config.json'), JSON.stringify({ model_type: 'olmoe', eos_token_id: EOS_ID, max_position_embeddings: 600 }));
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it.each([
    ['one short prompt', ['abc'], 10, CONTEXT_STEP],
    ['the longest prompt decides', ['a', 'x'.repeat(300), 'bb'], 10, 2 * CONTEXT_STEP],
    ['exactly on a step boundary', ['y'.repeat(256 - 6 - 50)], 50, CONTEXT_STEP],
    ['one past a step boundary', ['y'.repeat(256 - 6 - 50)], 51, 2 * CONTEXT_STEP],
  ])('%s', async (_name, prompts, maxNew, expected) => {
    expect(Math.max(...prompts.map(chatTokens)) + maxNew).toBeLessThanOrEqual(expected);
    expect(await runContextTokens(dir, prompts, maxNew)).toBe(expected);
  });

  it("is capped at config.json's max_position_embeddings", async () => {
    expect(await runContextTokens(capped, ['z'.repeat(400)], 100)).toBe(512);
    expect(await runContextTokens(capped, ['z'.repeat(400)], 400)).toBe(600);
  });

  it('names the folder when the tokenizer cannot be read', async () => {
    await expect(runContextTokens(path.join(dir, 'missing'), ['a'], 1)).rejects.toThrow(/missing.*tokenizer\.json: cannot read/);
  });
});
