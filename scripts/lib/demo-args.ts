/** The flags of `npm run demo` (scripts/demo.ts), parsed apart from the demo so that they are checked before any work. */
import { parseArgs } from 'node:util';

export const DEMO_USAGE = `usage: npm run demo -- [--data-dir DIR] [--limit N] [--max-new-tokens N] [--batch N]
  --data-dir        data folder (default <repo>/.horizon-data/demo)
  --limit           first N of the 541 IFEval prompts (default 541)
  --max-new-tokens  generation cap per response (default 32)
  --batch           prompts generated together (default 16)`;

/** Sized so the whole demo takes about a minute on two CPU cores. */
export const DEMO_DEFAULTS = { limit: 541, maxNewTokens: 32, batch: 16 } as const;

export interface DemoArgs {
  readonly dataDir: string | undefined;
  readonly limit: number;
  readonly maxNewTokens: number;
  readonly batch: number;
}

/** A bad flag or value: the demo prints it with the usage and exits 2, as `horizon` commands do. */
export class DemoUsageError extends Error {}

function count(name: string, v: string | undefined, fallback: number, max: number): number {
  if (v === undefined) return fallback;
  const n = /^\d+$/.test(v) ? Number(v) : NaN;
  if (!(n >= 1 && n <= max)) throw new DemoUsageError(`--${name} must be an integer from 1 to ${max}, got '${v}'`);
  return n;
}

/** The demo's settings, or 'help' for --help / -h. Throws DemoUsageError for an unknown flag or a bad value. */
export function parseDemoArgs(argv: string[]): DemoArgs | 'help' {
  let values;
  try {
    ({ values } = parseArgs({
      args: argv,
      options: {
        'data-dir': { type: 'string' },
        limit: { type: 'string' },
        'max-new-tokens': { type: 'string' },
        batch: { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
    }));
  } catch (e) {
    throw new DemoUsageError((e as Error).message);
  }
  if (values.help) return 'help';
  return {
    dataDir: values['data-dir'],
    // The ranges horizon eval accepts: a value past them would fail only after the model was prepared.
    limit: count('limit', values.limit, DEMO_DEFAULTS.limit, 541),
    maxNewTokens: count('max-new-tokens', values['max-new-tokens'], DEMO_DEFAULTS.maxNewTokens, 65536),
    batch: count('batch', values.batch, DEMO_DEFAULTS.batch, 256),
  };
}
