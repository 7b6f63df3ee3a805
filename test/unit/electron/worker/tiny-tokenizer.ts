/** Test helper: a byte-level BPE tokenizer (no merges, one token per byte) and the real OLMoE chat template. */
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';

/** The chat_template of allenai/OLMoE-1B-7B-0924-Instruct's tokenizer_config.json (see ../shared/OLMOE.md). */
export const OLMOE_CHAT_TEMPLATE =
  "{{ bos_token }}{% for message in messages %}\n{% if message['role'] == 'system' %}\n{{ '<|system|>\\n' + message['content'] }}\n{% elif message['role'] == 'user' %}\n{{ '<|user|>\\n' + message['content'] }}\n{% elif message['role'] == 'assistant' %}\n{{ '<|assistant|>\\n'  + message['content'] + eos_token }}\n{% endif %}\n{% if loop.last and add_generation_prompt %}\n{{ '<|assistant|>' }}\n{% endif %}\n{% endfor %}";

function bytesToUnicode(): string[] {
  const bs: number[] = [];
  for (let b = 33; b <= 126; b++) bs.push(b);
  for (let b = 161; b <= 172; b++) bs.push(b);
  for (let b = 174; b <= 255; b++) bs.push(b);
  const cs = [...bs];
  let n = 0;
  for (let b = 0; b < 256; b++) {
    if (!bs.includes(b)) {
      bs.push(b);
      cs.push(256 + n++);
    }
  }
  const out = new Array<string>(256);
  bs.forEach((b, i) => (out[b] = String.fromCodePoint(cs[i] ?? 0)));
  return out;
}

export const SPECIAL_TOKENS = ['<|endoftext|>', '<|padding|>', '<|user|>', '<|assistant|>', '<|system|>'];
/** `<|endoftext|>`: bos = eos. */
export const EOS_ID = 256;

/** Writes tokenizer.json, tokenizer_config.json and config.json into `dir`. */
export async function writeTinyTokenizer(dir: string): Promise<void> {
  await mkdir(dir, { recursive: true });
  const vocab: Record<string, number> = {};
  bytesToUnicode().forEach((ch, b) => (vocab[ch] = b));
  const added = SPECIAL_TOKENS.map((content, i) => ({
    id: 256 + i,
    content,
    single_word: false,
    lstrip: false,
    rstrip: false,
    normalized: false,
    special: true,
  }));
  for (const a of added) vocab[a.content] = a.id;
  const tokenizer = {
    version: '1.0',
    truncation: null,
    padding: null,
    added_tokens: added,
    normalizer: null,
    pre_tokenizer: { type: 'ByteLevel', add_prefix_space: false, trim_offsets: true, use_regex: true },
    post_processor: null,
    decoder: { type: 'ByteLevel', add_prefix_space: true, trim_offsets: true, use_regex: true },
    model: {
      type: 'BPE',
      dropout: null,
      unk_token: null,
      continuing_subword_prefix: null,
      end_of_word_suffix: null,
      fuse_unk: false,
      byte_fallback: false,
      vocab,
      merges: [],
    },
  };
  const config = {
    add_bos_token: false,
    add_eos_token: false,
    bos_token: '<|endoftext|>',
    eos_token: '<|endoftext|>',
    pad_token: '<|padding|>',
    unk_token: null,
    clean_up_tokenization_spaces: true,
    model_max_length: 4096,
    tokenizer_class: 'GPTNeoXTokenizer',
    chat_template: OLMOE_CHAT_TEMPLATE,
  };
  await writeFile(path.join(dir, 'tokenizer.json'), JSON.stringify(tokenizer));
  await writeFile(path.join(dir, 'tokenizer_config.json'), JSON.stringify(config));
  await writeFile(path.join(dir, 'config.json'), JSON.stringify({ model_type: 'olmoe', eos_token_id: EOS_ID, vocab_size: 261 }));
}
