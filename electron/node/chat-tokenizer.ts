import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';

import { Template } from '@huggingface/jinja';
import { Tokenizer } from '@huggingface/tokenizers';

import { stopTokenIds, tokenContent } from '../common/stop-tokens.js';
import type { ChatEncoding } from '../common/worker-protocol.js';

type Json = Record<string, unknown>;

function parseJsonObject(file: string, text: string): Json {
  try {
    const v: unknown = JSON.parse(text);
    if (typeof v !== 'object' || v === null || Array.isArray(v)) throw new Error('not a JSON object');
    return v as Json;
  } catch (e) {
    throw new Error(`${file}: invalid JSON (${(e as Error).message})`, { cause: e });
  }
}

async function readJson(file: string): Promise<Json> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (e) {
    throw new Error(`${file}: cannot read (${(e as Error).message})`, { cause: e });
  }
  return parseJsonObject(file, text);
}

/** The file's JSON object, or undefined when it cannot be read (one read, not a probe and a second read). */
async function readJsonIfExists(file: string): Promise<Json | undefined> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch {
    return undefined;
  }
  return parseJsonObject(file, text);
}

/** A template file of its own, which Transformers (4.47 and later) prefers to tokenizer_config.json's chat_template. */
export const CHAT_TEMPLATE_FILE = 'chat_template.jinja';

/** Which file a model folder's chat template comes from, by the rule Transformers applies. */
export function chatTemplateSource(modelDir: string): typeof CHAT_TEMPLATE_FILE | 'tokenizer_config.json' {
  return existsSync(path.join(modelDir, CHAT_TEMPLATE_FILE)) ? CHAT_TEMPLATE_FILE : 'tokenizer_config.json';
}

async function readTextIfExists(file: string): Promise<string | undefined> {
  try {
    return await readFile(file, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new Error(`${file}: cannot read (${(e as Error).message})`, { cause: e });
  }
}

const SPECIAL_TOKEN_KEYS = ['bos_token', 'eos_token', 'unk_token', 'sep_token', 'pad_token', 'cls_token', 'mask_token'] as const;

/** The special tokens a template sees, as Transformers passes its `special_tokens_map` (absent ones omitted). */
function specialTokensMap(config: Json): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const key of SPECIAL_TOKEN_KEYS) {
    const content = tokenContent(config[key]);
    if (content !== undefined) out[key] = content;
  }
  if (Array.isArray(config.additional_special_tokens)) {
    out.additional_special_tokens = config.additional_special_tokens.map(tokenContent).filter((t) => t !== undefined);
  }
  return out;
}

/** tokenizer_config.json's template: a string, or from a list of named ones the one named "default" (as Transformers). */
function pickChatTemplate(config: Json, file: string): string {
  const t = config.chat_template;
  if (typeof t === 'string') return t;
  if (Array.isArray(t)) {
    const named = t.find((e: unknown) => (e as Json | null)?.name === 'default') as Json | undefined;
    if (typeof named?.template === 'string') return named.template;
    if (named) throw new Error(`${file}: chat_template's entry named "default" has no template text`);
    const names = t.map((e: unknown) => String((e as Json | null)?.name));
    throw new Error(`${file}: chat_template lists templates named ${names.join(', ')} but none named "default"`);
  }
  throw new Error(`${file}: no chat_template (and no ${CHAT_TEMPLATE_FILE} beside it)`);
}

/**
 * The model's tokenizer and chat template, rendered the way Transformers' `apply_chat_template` does
 * (the jinja Template enables trim_blocks and lstrip_blocks, as Transformers' environment does).
 */
export class ChatTokenizer {
  private constructor(
    private readonly tokenizer: Tokenizer,
    private readonly template: Template,
    /** The file the template came from, for errors. */
    private readonly templateFile: string,
    private readonly specialTokens: Readonly<Record<string, string | string[]>>,
    /** EOS ids from the tokenizer and config.json / generation_config.json, deduplicated. */
    readonly eosTokenIds: readonly number[],
  ) {}

  static async load(modelDir: string): Promise<ChatTokenizer> {
    const tokenizerFile = path.join(modelDir, 'tokenizer.json');
    const configFile = path.join(modelDir, 'tokenizer_config.json');
    const jinjaFile = path.join(modelDir, CHAT_TEMPLATE_FILE);
    // Read together, but a failure is reported for the first file in this order, not for whichever read lost the race.
    const settled = await Promise.allSettled([
      readJson(tokenizerFile),
      readJson(configFile),
      readJsonIfExists(path.join(modelDir, 'config.json')),
      readJsonIfExists(path.join(modelDir, 'generation_config.json')),
      readTextIfExists(jinjaFile),
    ]);
    const failed = settled.find((r) => r.status === 'rejected');
    if (failed) throw failed.reason;
    const [tokenizerJson, tokenizerConfig, modelConfig, generationConfig, jinjaText] = settled.map((r) =>
      r.status === 'fulfilled' ? r.value : undefined,
    ) as [Json, Json, Json | undefined, Json | undefined, string | undefined];
    let tokenizer: Tokenizer;
    try {
      tokenizer = new Tokenizer(tokenizerJson, tokenizerConfig);
    } catch (e) {
      throw new Error(`${tokenizerFile}: not a tokenizer this app can read (${(e as Error).message})`, { cause: e });
    }
    const templateFile = jinjaText !== undefined ? jinjaFile : configFile;
    const source = jinjaText ?? pickChatTemplate(tokenizerConfig, configFile);
    let template: Template;
    try {
      template = new Template(source);
    } catch (e) {
      throw new Error(`${templateFile}: the chat template does not parse (${(e as Error).message})`, { cause: e });
    }
    const ids = stopTokenIds(modelDir, { tokenizerConfig, config: modelConfig, generationConfig }, (t) => tokenizer.token_to_id(t));
    return new ChatTokenizer(tokenizer, template, templateFile, specialTokensMap(tokenizerConfig), ids);
  }

  /** The prompt as the single user turn, with the generation prompt appended. */
  renderChat(prompt: string): string {
    try {
      return renderChatTemplate(this.template, prompt, this.specialTokens);
    } catch (e) {
      throw new Error(`${this.templateFile}: the chat template failed: ${(e as Error).message}`, { cause: e });
    }
  }

  encodeChat(prompt: string): ChatEncoding {
    const text = this.renderChat(prompt);
    return { text, tokenIds: this.tokenizer.encode(text, { add_special_tokens: false }).ids };
  }

  /** Generated text without special tokens (EOS and the chat markers are dropped). */
  decode(tokenIds: readonly number[]): string {
    // The library refuses an empty list; a prompt cancelled before its first token has one.
    if (tokenIds.length === 0) return '';
    return this.tokenizer.decode([...tokenIds], { skip_special_tokens: true });
  }

  /**
   * The text of the first tokens of a response still being generated: a character whose UTF-8 bytes are not all
   * generated yet decodes to U+FFFD at the end, and is left out until its last byte arrives.
   */
  decodePrefix(tokenIds: readonly number[]): string {
    return this.decode(tokenIds).replace(/\uFFFD+$/, '');
  }
}

/**
 * Renders one user turn plus the generation prompt, with the variables Transformers passes: the special tokens
 * (`bos_token`, `eos_token`, ...) and `add_generation_prompt`.
 */
export function renderChatTemplate(template: Template, prompt: string, specialTokens: Readonly<Record<string, string | string[]>>): string {
  return template.render({
    ...specialTokens,
    messages: [{ role: 'user', content: prompt }],
    add_generation_prompt: true,
  });
}
