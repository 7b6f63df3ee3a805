import { resolveRuntimeDir } from '../../main/jobs/model-source.js';
import { loadModel } from '../../worker/runtime/binding.js';
import { abortOnSignals, intOption, parseCommandArgs, usageError } from '../command-args.js';
import { parseExpertBudget } from '../expert-budget.js';
import { parseModelFlags, parseTokenList } from './logits.js';

const PEAK_SCOPE_WORDS = {
  estimate: 'KV cache and scratch',
  process: 'this process on the GPU',
  device: 'whole GPU, other processes included',
} as const;

export const summary = 'greedy generation from token ids with the native runtime; prints tokens and figures';

const USAGE =
  'usage: horizon generate --model DIR --tokens 1,2,3 [--max-new-tokens N] [--stop 50279,...] [--weights bf16|int4]\n' +
  '                        [--backend cpu|cuda] [--threads N] [--json] [--expert-budget <GiB>|<N>slots] [--device N]\n' +
  '                        [--verify]\n' +
  '  DIR: a prepared model, a checkpoint folder or a packed int4-gN folder; --weights picks where both exist\n' +
  '  (default int4 when packed, else bf16); stop tokens default to config.json eos_token_id; --json prints one\n' +
  '  result object instead of text; --verify hashes every model file against its manifest (default: only files\n' +
  '  whose size or mtime changed since they last verified)';

export async function run(args: string[]): Promise<number> {
  const parsed = parseCommandArgs(
    'generate',
    USAGE,
    args,
    {
      model: { type: 'string' },
      tokens: { type: 'string' },
      'max-new-tokens': { type: 'string' },
      stop: { type: 'string' },
      weights: { type: 'string' },
      backend: { type: 'string' },
      'expert-budget': { type: 'string' },
      threads: { type: 'string' },
      device: { type: 'string' },
      json: { type: 'boolean' },
      verify: { type: 'boolean' },
    },
    { required: ['model', 'tokens'] },
  );
  if (typeof parsed === 'number') return parsed;
  const { values } = parsed;
  let prompt, stopFlag, maxNewTokens, flags, budget;
  try {
    prompt = parseTokenList(values.tokens);
    stopFlag = values.stop !== undefined ? parseTokenList(values.stop, '--stop') : undefined;
    maxNewTokens = intOption('max-new-tokens', values['max-new-tokens'], 0, 65536) ?? 32;
    flags = parseModelFlags(values);
    budget = parseExpertBudget(values['expert-budget']);
  } catch (e) {
    return usageError('generate', USAGE, (e as Error).message);
  }
  const model = await loadModel({ ...flags, ...(await resolveRuntimeDir(values.model, flags.weights, { verify: values.verify === true })), ...budget });
  const cancel = abortOnSignals(['SIGINT', 'SIGTERM']);
  try {
    const info = model.info();
    const stopTokens = stopFlag ?? [...info.eosTokenIds];
    let printed = false;
    const out = await model.generate(
      { prompts: [prompt], maxNewTokens, stopTokens },
      (_i, token) => {
        if (values.json) return;
        process.stdout.write(`${printed ? '' : 'tokens:'} ${token}`);
        printed = true;
      },
      cancel.signal,
    );
    if (!values.json && !printed) process.stdout.write('tokens:');
    const r = out.results[0]!;
    if (values.json) {
      console.log(JSON.stringify({ backend: info.backend, weights: info.weights, ...r, stats: out.stats }));
    } else {
      console.log('');
      console.log(
        `backend ${info.backend} (${info.weights}${info.simd ? ', avx2' : ''}, ${info.threads} threads): ` +
          `${r.promptTokens} prompt tokens, ${r.tokens.length} generated, finish ${r.finishReason}, ` +
          `time to first token ${r.ttftMs.toFixed(1)} ms, decode ${r.decodeTokensPerSecond.toFixed(2)} tokens/s, ` +
          `peak memory ${(out.stats.peakMemoryBytes / 2 ** 20).toFixed(1)} MiB (${PEAK_SCOPE_WORDS[out.stats.peakMemoryScope]})`,
      );
      if (info.backend === 'cuda') {
        const s = out.stats;
        console.log(
          `experts: ${s.expertHits} hits, ${s.expertMisses} misses, ${s.expertEvictions ?? 0} evictions, ` +
            `H2D ${(s.h2dBytes / 2 ** 20).toFixed(1)} MiB, D2H ${(s.d2hBytes / 2 ** 20).toFixed(1)} MiB`,
        );
      }
    }
    return r.finishReason === 'cancelled' ? 130 : 0;
  } finally {
    cancel.dispose();
    model.close();
  }
}
