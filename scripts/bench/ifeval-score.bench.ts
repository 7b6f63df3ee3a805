// Times the IFEval scorer on the 541 GPT-4 responses published with the benchmark (540 scored, strict + loose).
// Prints figures only; `npm run bench` calls bench(), or run this file directly with tsx.
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { loadPromptRecords, loadResponses } from '../../evals/ifeval/node/dataset.js';
import { loadTextTools } from '../../evals/ifeval/node/load-text-tools.js';
import { scoreResponses } from '../../evals/ifeval/score.js';

const SHARED = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'shared');
const RUNS = 3;

export async function bench(): Promise<void> {
  const t0 = performance.now();
  const [records, responses, tools] = await Promise.all([
    loadPromptRecords(path.join(SHARED, 'ifeval', 'input_data.jsonl')),
    loadResponses(path.join(SHARED, 'ifeval', 'parity', 'gpt4_responses.jsonl')),
    loadTextTools({ punktDir: path.join(SHARED, 'nltk', 'punkt_english') }),
  ]);
  const loadMs = performance.now() - t0;
  const times: number[] = [];
  let scored = 0;
  for (let i = 0; i < RUNS; i++) {
    const t = performance.now();
    scored = scoreResponses(records, responses, tools).keys.length;
    times.push(performance.now() - t);
  }
  const best = Math.min(...times);
  console.log(`ifeval-score: load dataset + responses + text tools ${loadMs.toFixed(0)} ms`);
  console.log(
    `ifeval-score: score ${scored} responses strict+loose: first ${times[0]!.toFixed(0)} ms, best of ${RUNS} ${best.toFixed(0)} ms ` +
      `(${(best / scored).toFixed(2)} ms/response)`,
  );
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) await bench();
