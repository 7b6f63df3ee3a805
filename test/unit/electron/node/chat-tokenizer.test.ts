import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

import { Template } from '@huggingface/jinja';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { ChatTokenizer, renderChatTemplate } from '../../../../electron/node/chat-tokenizer.js';
import { EOS_ID, OLMOE_CHAT_TEMPLATE, writeTinyTokenizer } from '../worker/tiny-tokenizer.js';

describe('OLMoE chat template', () => {
  it('renders one user turn exactly as Transformers does (trim_blocks + lstrip_blocks)', () => {
    const text = renderChatTemplate(new Template(OLMOE_CHAT_TEMPLATE), 'Write a haiku.', '<|endoftext|>', '<|endoftext|>');
    expect(text).toBe('<|endoftext|><|user|>\nWrite a haiku.\n<|assistant|>\n');
  });

  it('keeps the prompt verbatim, newlines and braces included', () => {
    const prompt = 'Line 1\n\n{{ not a tag }} {% raw %}';
    const text = renderChatTemplate(new Template(OLMOE_CHAT_TEMPLATE), prompt, '<|endoftext|>', '<|endoftext|>');
    expect(text).toBe(`<|endoftext|><|user|>\n${prompt}\n<|assistant|>\n`);
  });
});

describe('ChatTokenizer', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'horizon-tok-'));
    await writeTinyTokenizer(dir);
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it('encodes the rendered chat with special tokens as single ids and no extra BOS', async () => {
    const tok = await ChatTokenizer.load(dir);
    const enc = tok.encodeChat('Hi');
    expect(enc.text).toBe('<|endoftext|><|user|>\nHi\n<|assistant|>\n');
    // <|endoftext|>=256, <|user|>=258, "\n"=10 (byte-level "Ċ"), "H", "i", "\n", <|assistant|>=259, "\n"
    expect(enc.tokenIds).toEqual([256, 258, 10, 72, 105, 10, 259, 10]);
  });

  it('decodes generated ids without special tokens and reports the EOS ids', async () => {
    const tok = await ChatTokenizer.load(dir);
    expect(tok.decode([...Buffer.from('héllo wörld', 'utf8'), EOS_ID])).toBe('héllo wörld');
    expect(tok.decode([])).toBe(''); // a prompt cancelled before its first token
    expect(tok.eosTokenIds).toEqual([EOS_ID]);
  });

  it('names the file when tokenizer.json is missing', async () => {
    await expect(ChatTokenizer.load(path.join(dir, 'nope'))).rejects.toThrow(/tokenizer\.json: cannot read/);
  });
});
