import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

import { Template } from '@huggingface/jinja';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { ChatTokenizer, chatTemplateSource, renderChatTemplate } from '../../../../electron/node/chat-tokenizer.js';
import { EOS_ID, OLMOE_CHAT_TEMPLATE, writeTinyTokenizer } from '../worker/tiny-tokenizer.js';

const OLMOE_SPECIAL = { bos_token: '<|endoftext|>', eos_token: '<|endoftext|>' };

describe('OLMoE chat template', () => {
  it('renders one user turn exactly as Transformers does (trim_blocks + lstrip_blocks)', () => {
    const text = renderChatTemplate(new Template(OLMOE_CHAT_TEMPLATE), 'Write a haiku.', OLMOE_SPECIAL);
    expect(text).toBe('<|endoftext|><|user|>\nWrite a haiku.\n<|assistant|>\n');
  });

  it('keeps the prompt verbatim, newlines and braces included', () => {
    const prompt = 'Line 1\n\n{{ not a tag }} {% raw %}';
    const text = renderChatTemplate(new Template(OLMOE_CHAT_TEMPLATE), prompt, OLMOE_SPECIAL);
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

describe('ChatTokenizer loading edge cases', () => {
  let root: string;
  let n = 0;
  beforeAll(async () => {
    root = await mkdtemp(path.join(os.tmpdir(), 'horizon-tok-edge-'));
  });
  afterAll(() => rm(root, { recursive: true, force: true }));

  /** A fresh copy of the tiny tokenizer with tokenizer_config.json changed by `edit`. */
  const folder = async (edit: (config: Record<string, unknown>) => void = () => {}): Promise<string> => {
    const dir = path.join(root, String(++n));
    await writeTinyTokenizer(dir);
    const file = path.join(dir, 'tokenizer_config.json');
    const config = JSON.parse(await readFile(file, 'utf8')) as Record<string, unknown>;
    edit(config);
    await writeFile(file, JSON.stringify(config));
    return dir;
  };

  it('names tokenizer_config.json when it holds JSON that is not an object', async () => {
    const dir = await folder();
    await writeFile(path.join(dir, 'tokenizer_config.json'), '[]');
    await expect(ChatTokenizer.load(dir)).rejects.toThrow(`${path.join(dir, 'tokenizer_config.json')}: invalid JSON (not a JSON object)`);
  });

  it('refuses a "default" template entry without its text', async () => {
    const dir = await folder((c) => (c.chat_template = [{ name: 'default' }, { name: 'tool_use', template: 'x' }]));
    await expect(ChatTokenizer.load(dir)).rejects.toThrow(`${path.join(dir, 'tokenizer_config.json')}: chat_template's entry named "default" has no template text`);
  });

  it('names chat_template.jinja when it is there but cannot be read', async () => {
    const dir = await folder();
    await mkdir(path.join(dir, 'chat_template.jinja'));
    await expect(ChatTokenizer.load(dir)).rejects.toThrow(`${path.join(dir, 'chat_template.jinja')}: cannot read`);
  });

  it('names tokenizer.json when it is JSON but not a tokenizer', async () => {
    const dir = await folder();
    await writeFile(path.join(dir, 'tokenizer.json'), JSON.stringify({ version: '1.0', model: { type: 'BPE', vocab: {}, merges: [] } }));
    await expect(ChatTokenizer.load(dir)).rejects.toThrow(/tokenizer\.json: not a tokenizer this app can read \(.+\)/);
  });

  it('takes the template named "default" from a list, and refuses a list without one as Transformers does', async () => {
    const named = (names: string[]) => names.map((name) => ({ name, template: `${name}:{{ messages[0].content }}` }));
    const withDefault = await folder((c) => void (c.chat_template = named(['tool_use', 'default'])));
    expect((await ChatTokenizer.load(withDefault)).renderChat('hi')).toBe('default:hi');
    const without = await folder((c) => void (c.chat_template = named(['tool_use', 'rag'])));
    await expect(ChatTokenizer.load(without)).rejects.toThrow(/tokenizer_config\.json: chat_template lists templates named tool_use, rag but none named "default"/);
  });

  it('says where a missing template was looked for', async () => {
    const dir = await folder((c) => void delete c.chat_template);
    expect(chatTemplateSource(dir)).toBe('tokenizer_config.json');
    await expect(ChatTokenizer.load(dir)).rejects.toThrow(/tokenizer_config\.json: no chat_template \(and no chat_template\.jinja beside it\)$/);
  });

  it('prefers chat_template.jinja to tokenizer_config.json, as Transformers 4.47 and later do', async () => {
    const dir = await folder((c) => void (c.chat_template = 'config:{{ messages[0].content }}'));
    expect((await ChatTokenizer.load(dir)).renderChat('hi')).toBe('config:hi');
    await writeFile(path.join(dir, 'chat_template.jinja'), 'jinja:{{ messages[0].content }}{{ eos_token }}');
    expect(chatTemplateSource(dir)).toBe('chat_template.jinja');
    expect((await ChatTokenizer.load(dir)).renderChat('hi')).toBe('jinja:hi<|endoftext|>');
    const only = await folder((c) => void delete c.chat_template);
    await writeFile(path.join(only, 'chat_template.jinja'), 'only:{{ messages[0].content }}');
    expect((await ChatTokenizer.load(only)).renderChat('hi')).toBe('only:hi');
  });

  it('names chat_template.jinja when that template is broken', async () => {
    const dir = await folder(() => undefined);
    await writeFile(path.join(dir, 'chat_template.jinja'), '{% if %}');
    await expect(ChatTokenizer.load(dir)).rejects.toThrow(/chat_template\.jinja: the chat template does not parse \(.+\)/);
  });

  it('names the file when the template does not parse or raises while rendering', async () => {
    const broken = await folder((c) => void (c.chat_template = '{% for m in messages %}{{ m.content }}{% endfor %{'));
    await expect(ChatTokenizer.load(broken)).rejects.toThrow(/tokenizer_config\.json: the chat template does not parse \(.+\)/);
    const raising = await folder((c) => void (c.chat_template = "{{ raise_exception('a system message must come first') }}"));
    const tok = await ChatTokenizer.load(raising);
    expect(() => tok.encodeChat('hi')).toThrow(/tokenizer_config\.json: the chat template failed: a system message must come first/);
  });

  it("passes every special token to the template, as Transformers' special_tokens_map does", async () => {
    const dir = await folder((c) => {
      c.chat_template = '{{ bos_token }}|{{ eos_token }}|{{ pad_token }}|{{ unk_token }}|{{ messages[0].content }}';
      c.bos_token = { __type: 'AddedToken', content: '<|endoftext|>', lstrip: false, rstrip: false, normalized: false };
    });
    expect((await ChatTokenizer.load(dir)).renderChat('hi')).toBe('<|endoftext|>|<|endoftext|>|<|padding|>||hi');
  });

  it('leaves a character still incomplete out of a prefix, not U+FFFD', async () => {
    const tok = await ChatTokenizer.load(await folder());
    const euro = [...Buffer.from('x€', 'utf8')]; // "€" is 3 bytes, one token each
    expect([1, 2, 3, 4].map((k) => tok.decodePrefix(euro.slice(0, k)))).toEqual(['x', 'x', 'x', 'x€']);
    expect(tok.decode(euro.slice(0, 2))).toBe('x\uFFFD'); // a finished response keeps what the model generated
    expect(tok.decodePrefix([])).toBe('');
    // An invalid byte and an unfinished character: both replacement characters are left out.
    const twice = [...Buffer.from('x', 'utf8'), 0xe2, 0xe2];
    expect(tok.decode(twice)).toBe('x\uFFFD\uFFFD');
    expect(tok.decodePrefix(twice)).toBe('x');
  });

  it('passes additional_special_tokens to the template as a list of their contents', async () => {
    const dir = await folder((c) => {
      c.chat_template = "{{ additional_special_tokens | join(',') }}|{{ messages[0].content }}";
      c.additional_special_tokens = ['<|a|>', { __type: 'AddedToken', content: '<|b|>', lstrip: false, rstrip: false }];
    });
    expect((await ChatTokenizer.load(dir)).renderChat('hi')).toBe('<|a|>,<|b|>|hi');
  });
});
