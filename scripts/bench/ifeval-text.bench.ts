// Times the IFEval text tools (Punkt sentences, NLTK word_tokenize, langdetect) on the 541 GPT-4 responses published
// with the benchmark. Prints figures only; `npm run bench` calls bench(), or run this file directly with tsx.
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { loadTextTools } from '../../evals/ifeval/node/load-text-tools.js';

const SHARED = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'shared');
const RUNS = 3;

function best(fn: () => number): { ms: number; count: number } {
  let ms = Infinity;
  let count = 0;
  for (let i = 0; i < RUNS; i++) {
    const t = performance.now();
    count = fn();
    ms = Math.min(ms, performance.now() - t);
  }
  return { ms, count };
}

export async function bench(): Promise<void> {
  const t0 = performance.now();
  const tools = await loadTextTools({ punktDir: path.join(SHARED, 'nltk', 'punkt_english') });
  const loadMs = performance.now() - t0;
  const responses = (await readFile(path.join(SHARED, 'ifeval', 'parity', 'gpt4_responses.jsonl'), 'utf8'))
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => (JSON.parse(l) as { response?: unknown }).response)
    .filter((r): r is string => typeof r === 'string');

  const sents = best(() => responses.reduce((n, r) => n + tools.sentTokenize(r).length, 0));
  const words = best(() => responses.reduce((n, r) => n + tools.wordTokenize(r).length, 0));
  const langs = best(() => {
    let n = 0;
    for (const r of responses) {
      try {
        tools.detectLanguage(r);
        n++;
      } catch {
        n++;
      }
    }
    return n;
  });
  const perS = (count: number, ms: number): string => ((count * 1000) / ms).toFixed(0);
  console.log(`ifeval-text: load Punkt parameters + 55 langdetect profiles ${loadMs.toFixed(0)} ms`);
  console.log(
    `ifeval-text: sentTokenize ${responses.length} responses, ${sents.count} sentences in ${sents.ms.toFixed(0)} ms ` +
      `(${perS(sents.count, sents.ms)} sentences/s, ${perS(responses.length, sents.ms)} responses/s; best of ${RUNS})`,
  );
  console.log(
    `ifeval-text: wordTokenize ${responses.length} responses, ${words.count} tokens in ${words.ms.toFixed(0)} ms ` +
      `(${perS(words.count, words.ms)} tokens/s; best of ${RUNS})`,
  );
  console.log(
    `ifeval-text: detectLanguage ${langs.count} responses in ${langs.ms.toFixed(0)} ms ` +
      `(${perS(langs.count, langs.ms)} detections/s; best of ${RUNS})`,
  );
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) await bench();
