/** A small GPT-2 style byte-level BPE tokenizer.json, trained deterministically on a fixed English text. */

/** Special tokens appended after the BPE vocabulary, in id order. */
export const SPECIAL_TOKENS = ['<|endoftext|>', '<|padding|>'] as const;

const TRAINING_TEXT = `The quick brown fox jumps over the lazy dog. Write a short story about a robot that learns to paint.
Answer in at least three paragraphs, and do not use any commas in your response. The response must contain a title,
wrapped in double angular brackets, such as <<poem of joy>>. Please repeat the request first, then give your answer.
What is the capital of France? The capital of France is Paris, and the river that flows through the city is the Seine.
In the morning the children went to the market with their mother; they bought bread, apples, cheese and fresh milk.
There are many reasons to learn a new language: it opens the mind, it helps you travel, and it is a lot of fun.
Highlight at least two sections with markdown, i.e. *highlighted section*. End your response with "Is there anything else?"
Your entire response should be in English, and in all lowercase letters. No capital letters are allowed.
The model is a mixture of experts: each token is routed to the top experts, and their outputs are added together.`;

const PRETOKENIZE = /'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+/gu;

/** GPT-2's reversible map from bytes to printable unicode characters. */
export function bytesToUnicode(): string[] {
  const printable: number[] = [];
  for (let b = 33; b <= 126; b++) printable.push(b);
  for (let b = 161; b <= 172; b++) printable.push(b);
  for (let b = 174; b <= 255; b++) printable.push(b);
  const map: string[] = new Array<string>(256);
  let extra = 0;
  for (let b = 0; b < 256; b++) {
    if (printable.includes(b)) map[b] = String.fromCodePoint(b);
    else map[b] = String.fromCodePoint(256 + extra++);
  }
  return map;
}

/** Learns `numMerges` merges (most frequent pair first, ties broken by the pair's string order). */
export function learnMerges(text: string, numMerges: number): [string, string][] {
  const byteMap = bytesToUnicode();
  const encoder = new TextEncoder();
  const counts = new Map<string, number>();
  for (const m of text.matchAll(PRETOKENIZE)) {
    const word = Array.from(encoder.encode(m[0]), (b) => byteMap[b]!).join('\u0000');
    counts.set(word, (counts.get(word) ?? 0) + 1);
  }
  let words = [...counts.entries()].map(([w, n]) => ({ symbols: w.split('\u0000'), count: n }));
  const merges: [string, string][] = [];
  while (merges.length < numMerges) {
    const pairs = new Map<string, number>();
    for (const { symbols, count } of words) {
      for (let i = 0; i + 1 < symbols.length; i++) {
        const key = `${symbols[i]} ${symbols[i + 1]}`;
        pairs.set(key, (pairs.get(key) ?? 0) + count);
      }
    }
    let best: string | undefined;
    let bestCount = 0;
    for (const [key, n] of pairs) {
      if (n > bestCount || (n === bestCount && best !== undefined && key < best)) {
        best = key;
        bestCount = n;
      }
    }
    if (best === undefined) break;
    const [a, b] = best.split(' ') as [string, string];
    merges.push([a, b]);
    words = words.map(({ symbols, count }) => {
      const out: string[] = [];
      for (let i = 0; i < symbols.length; i++) {
        if (i + 1 < symbols.length && symbols[i] === a && symbols[i + 1] === b) {
          out.push(a + b);
          i++;
        } else out.push(symbols[i]!);
      }
      return { symbols: out, count };
    });
  }
  return merges;
}

/** The tokenizer.json object, plus the ids of the special tokens and the total token count. */
export type ByteLevelTokenizer = {
  readonly json: Record<string, unknown>;
  readonly specialIds: Record<(typeof SPECIAL_TOKENS)[number], number>;
  readonly size: number;
};

/** Builds a byte-level BPE tokenizer.json: 256 byte tokens, `numMerges` learned merges, then the special tokens. */
export function buildByteLevelTokenizer(numMerges = 64): ByteLevelTokenizer {
  const byteMap = bytesToUnicode();
  const vocab: Record<string, number> = {};
  let next = 0;
  for (let b = 0; b < 256; b++) vocab[byteMap[b]!] = next++;
  const merges = learnMerges(TRAINING_TEXT, numMerges);
  for (const [a, b] of merges) if (!(a + b in vocab)) vocab[a + b] = next++;
  const specialIds = {} as Record<(typeof SPECIAL_TOKENS)[number], number>;
  const addedTokens = SPECIAL_TOKENS.map((content) => {
    specialIds[content] = next;
    return { id: next++, content, single_word: false, lstrip: false, rstrip: false, normalized: false, special: true };
  });
  const byteLevel = { type: 'ByteLevel', add_prefix_space: false, trim_offsets: true, use_regex: true };
  const json = {
    version: '1.0',
    truncation: null,
    padding: null,
    added_tokens: addedTokens,
    normalizer: null,
    pre_tokenizer: byteLevel,
    post_processor: byteLevel,
    decoder: byteLevel,
    model: {
      type: 'BPE',
      dropout: null,
      unk_token: null,
      continuing_subword_prefix: null,
      end_of_word_suffix: null,
      fuse_unk: false,
      byte_fallback: false,
      vocab,
      merges: merges.map(([a, b]) => `${a} ${b}`),
    },
  };
  return { json, specialIds, size: next };
}
