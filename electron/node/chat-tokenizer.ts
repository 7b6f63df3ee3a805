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

function pickChatTemplate(config: Json, file: string): string {
  const t = config.chat_template;
  if (typeof t === 'string') return t;
  if (Array.isArray(t)) {
    const named = t.find((e: unknown) => (e as Json | null)?.name === 'default') ?? t[0];
    if (typeof (named as Json | undefined)?.template === 'string') return (named as Json).template as string;
  }
  throw new Error(`${file}: no chat_template`);
}

/**
 * The model's tokenizer and chat template, rendered the way Transformers' `apply_chat_template` does
 * (the jinja Template enables trim_blocks and lstrip_blocks, as Transformers' environment does).
 */
export class ChatTokenizer {
  private constructor(
    private readonly tokenizer: Tokenizer,
    private readonly template: Template,
    private readonly bosToken: string,
    private readonly eosToken: string,
    /** EOS ids from the tokenizer and config.json / generation_config.json, deduplicated. */
    readonly eosTokenIds: readonly number[],
  ) {}

  static async load(modelDir: string): Promise<ChatTokenizer> {
    const configFile = path.join(modelDir, 'tokenizer_config.json');
    // Read together, but a failure is reported for the first file in this order, not for whichever read lost the race.
    const settled = await Promise.allSettled([
      readJson(path.join(modelDir, 'tokenizer.json')),
      readJson(configFile),
      readJsonIfExists(path.join(modelDir, 'config.json')),
      readJsonIfExists(path.join(modelDir, 'generation_config.json')),
    ]);
    const failed = settled.find((r) => r.status === 'rejected');
    if (failed) throw failed.reason;
    const [tokenizerJson, tokenizerConfig, modelConfig, generationConfig] = settled.map((r) =>
      r.status === 'fulfilled' ? r.value : undefined,
    ) as [Json, Json, Json | undefined, Json | undefined];
    const tokenizer = new Tokenizer(tokenizerJson, tokenizerConfig);
    const template = new Template(pickChatTemplate(tokenizerConfig, configFile));
    const eosToken = tokenContent(tokenizerConfig.eos_token) ?? '';
    const bosToken = tokenContent(tokenizerConfig.bos_token) ?? '';
    const ids = stopTokenIds(modelDir, { tokenizerConfig, config: modelConfig, generationConfig }, (t) => tokenizer.token_to_id(t));
    return new ChatTokenizer(tokenizer, template, bosToken, eosToken, ids);
  }

  /** The prompt as the single user turn, with the generation prompt appended. */
  renderChat(prompt: string): string {
    return renderChatTemplate(this.template, prompt, this.bosToken, this.eosToken);
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
}

/** Renders one user turn plus the generation prompt, with the variables Transformers passes. */
export function renderChatTemplate(template: Template, prompt: string, bosToken: string, eosToken: string): string {
  return template.render({
    messages: [{ role: 'user', content: prompt }],
    add_generation_prompt: true,
    bos_token: bosToken,
    eos_token: eosToken,
  });
}
