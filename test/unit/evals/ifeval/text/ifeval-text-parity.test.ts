// The reference scorer's verdicts that depend only on these text tools, recomputed here: count_sentences is
// len(punkt.tokenize(text)), count_words is len(RegexpTokenizer(r"\w+").tokenize(text)) with Python's \w, and
// response_language is detect(text) == language (LangDetectException counts as following). Both strict (raw response) and loose (the 8 response variants) verdicts must match
// gpt4_reference_verdicts.jsonl; every mismatch is reported with its key.
import { readFileSync } from 'node:fs';
import path from 'node:path';

import { beforeAll, describe, expect, it } from 'vitest';

import { loadTextTools } from '../../../../../evals/ifeval/node/load-text-tools.js';
import { PY_WORD_CHARS, pyStrip } from '../../../../../evals/ifeval/text/punkt-python-chars.js';
import type { TextTools } from '../../../../../evals/ifeval/text/text-tools.js';
import { PUNKT_DIR, SHARED } from './golden/golden.js';

type Input = { key: number; prompt: string; instruction_id_list: string[]; kwargs: Array<Record<string, unknown>> };
type Verdict = { key: number; strict: boolean[]; loose: boolean[] };

const readJsonl = <T>(file: string): T[] =>
  readFileSync(path.join(SHARED, 'ifeval', file), 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as T);

/** The loose-scoring variants of google-research evaluation_lib.test_instruction_following_loose. */
function looseVariants(response: string): string[] {
  const r = response.split('\n');
  const removeFirst = pyStrip(r.slice(1).join('\n'));
  const removeLast = pyStrip(r.slice(0, -1).join('\n'));
  const removeBoth = pyStrip(r.slice(1, -1).join('\n'));
  const star = (s: string): string => s.replaceAll('*', '');
  return [response, star(response), removeFirst, removeLast, removeBoth, star(removeFirst), star(removeLast), star(removeBoth)];
}

const WORDS_RE = new RegExp(`[${PY_WORD_CHARS}]+`, 'gu');

let tools: TextTools;
const inputs = new Map(readJsonl<Input>('input_data.jsonl').map((r) => [r.key, r]));
const responses = new Map(
  readJsonl<{ prompt: string; response?: string }>('parity/gpt4_responses.jsonl').map((r) => [r.prompt, r.response]),
);
const verdicts = readJsonl<Verdict>('parity/gpt4_reference_verdicts.jsonl');

beforeAll(async () => {
  tools = await loadTextTools({ punktDir: PUNKT_DIR });
});

function checkFollowing(id: string, kwargs: Record<string, unknown>, text: string): boolean {
  if (id === 'length_constraints:number_sentences' || id === 'length_constraints:number_words') {
    const sentences = id === 'length_constraints:number_sentences';
    const n = sentences ? tools.sentTokenize(text).length : (text.match(WORDS_RE) ?? []).length;
    const threshold = (sentences ? kwargs.num_sentences : kwargs.num_words) as number;
    if (kwargs.relation === 'less than') return n < threshold;
    if (kwargs.relation === 'at least') return n >= threshold;
    throw new Error(`input_data.jsonl: unknown relation ${String(kwargs.relation)}`);
  }
  try {
    return tools.detectLanguage(text) === kwargs.language;
  } catch {
    return true;
  }
}

describe.each(['length_constraints:number_sentences', 'length_constraints:number_words', 'language:response_language'])('%s parity with the reference scorer', (id) => {
  const rows = verdicts.flatMap((v) => {
    const input = inputs.get(v.key);
    if (!input) throw new Error(`gpt4_reference_verdicts.jsonl: key ${v.key} is not in input_data.jsonl`);
    return input.instruction_id_list.flatMap((iid, i) => (iid === id ? [{ key: v.key, input, i, verdict: v }] : []));
  });

  it('has rows to check', () => {
    expect(rows.length).toBeGreaterThan(25);
  });

  it('strict and loose verdicts match for every GPT-4 response', () => {
    const mismatches: string[] = [];
    for (const { key, input, i, verdict } of rows) {
      const response = responses.get(input.prompt);
      if (response === undefined) throw new Error(`gpt4_responses.jsonl: no response for key ${key}`);
      const kwargs = input.kwargs[i] as Record<string, unknown>;
      const strict = checkFollowing(id, kwargs, response);
      const loose = looseVariants(response).some((r) => pyStrip(r) !== '' && checkFollowing(id, kwargs, r));
      if (strict !== verdict.strict[i]) mismatches.push(`key ${key}: strict ${strict}, reference ${verdict.strict[i]}`);
      if (loose !== verdict.loose[i]) mismatches.push(`key ${key}: loose ${loose}, reference ${verdict.loose[i]}`);
    }
    expect(mismatches).toEqual([]);
  });
});
