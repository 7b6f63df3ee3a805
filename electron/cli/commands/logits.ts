import { renameSync, rmSync, writeFileSync } from 'node:fs';

import { resolveRuntimeDir } from '../../main/jobs/model-source.js';
import { loadModel } from '../../worker/runtime/binding.js';
import { intOption, parseCommandArgs, usageError } from '../command-args.js';
import { parseCudaDevice } from '../cuda-device.js';
import { parseExpertBudget } from '../expert-budget.js';
import type { BackendKind, WeightsKind } from '../../worker/runtime/binding.js';

export const summary = 'compute the logits of every position of a token list (native runtime) and write them as JSON';

const USAGE =
  'usage: horizon logits --model DIR --tokens 1,2,3 --out F.json [--weights bf16|int4] [--backend cpu|cuda] [--threads N]\n' +
  '       [--expert-budget <GiB>|<N>slots]  (cuda: device memory or GPU slots per layer for resident experts)\n' +
  '       [--device N]  (cuda: device index, see horizon devices; default 0)\n' +
  '  writes {"tokens":[...],"logits":[[...] one row of vocab_size per position]}\n' +
  '  DIR: a prepared model, a checkpoint folder or a packed int4-gN folder; --weights picks where both exist\n' +
  '  (default int4 when packed, else bf16)';

/** Parses "1,2,3" into token ids. */
export function parseTokenList(text: string, flag = '--tokens'): number[] {
  const out = text.split(',').filter((s) => s.trim() !== '').map((s) => Number(s.trim()));
  if (out.length === 0 || out.some((n) => !Number.isInteger(n) || n < 0)) throw new Error(`${flag} must be comma-separated token ids, got '${text}'`);
  return out;
}

/** Validates --weights / --backend / --threads / --device shared by logits and generate. */
export function parseModelFlags(values: { weights?: string; backend?: string; threads?: string; device?: string; 'expert-budget'?: string }): {
  weights?: WeightsKind;
  backend: BackendKind;
  threads?: number;
  device?: number;
} {
  const weights = values.weights;
  if (weights !== undefined && weights !== 'bf16' && weights !== 'int4') throw new Error(`--weights must be bf16 or int4, got '${weights}'`);
  const backend = values.backend ?? 'cpu';
  if (backend !== 'cpu' && backend !== 'cuda') throw new Error(`--backend must be cpu or cuda, got '${backend}'`);
  const threads = intOption('threads', values.threads, 1, 1024);
  // A CUDA-only flag on the CPU would be silently ignored, and the figures mistaken for what it asked.
  for (const flag of ['device', 'expert-budget'] as const) {
    if (backend === 'cpu' && values[flag] !== undefined) throw new Error(`--${flag} applies to --backend cuda only`);
  }
  const device = parseCudaDevice(values.device);
  return { ...(weights !== undefined ? { weights } : {}), backend, threads, ...(device !== undefined ? { device } : {}) };
}

export async function run(args: string[]): Promise<number> {
  const parsed = parseCommandArgs(
    'logits',
    USAGE,
    args,
    {
      model: { type: 'string' },
      tokens: { type: 'string' },
      out: { type: 'string' },
      weights: { type: 'string' },
      backend: { type: 'string' },
      'expert-budget': { type: 'string' },
      threads: { type: 'string' },
      device: { type: 'string' },
    },
    { required: ['model', 'tokens', 'out'] },
  );
  if (typeof parsed === 'number') return parsed;
  const { values } = parsed;
  let tokens, flags, budget;
  try {
    tokens = parseTokenList(values.tokens);
    flags = parseModelFlags(values);
    budget = parseExpertBudget(values['expert-budget']);
  } catch (e) {
    return usageError('logits', USAGE, (e as Error).message);
  }
  const model = await loadModel({ ...flags, ...(await resolveRuntimeDir(values.model, flags.weights)), ...budget });
  try {
    const logits = await model.logits(tokens);
    const rows = logits.map((row) => `[${Array.from(row).join(',')}]`);
    const tmp = `${values.out}.tmp-${process.pid}`;
    try {
      writeFileSync(tmp, `{"tokens":${JSON.stringify(tokens)},"logits":[${rows.join(',\n')}]}\n`);
      renameSync(tmp, values.out);
    } catch (e) {
      rmSync(tmp, { force: true });
      throw new Error(`--out ${values.out}: cannot write (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`, { cause: e });
    }
    const info = model.info();
    console.log(`logits: ${tokens.length} positions x ${info.vocabSize} (${info.backend}, ${info.weights}) -> ${values.out}`);
    return 0;
  } finally {
    model.close();
  }
}
