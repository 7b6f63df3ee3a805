/** Test helper: a byte-level BPE tokenizer (no merges, one token per byte) and the real OLMoE chat template. */
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';

import { bytesToUnicode } from '../../../../scripts/lib/byte-level-bpe.js';
import { OLMOE_CHAT_TEMPLATE } from '../../../../scripts/make-tiny-model.js';

export { OLMOE_CHAT_TEMPLATE };

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
