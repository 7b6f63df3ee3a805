/**
 * What every `horizon <name>` command does with its arguments before its own work: parse the flags
 * (every command also takes --help / -h), answer a usage error with `horizon <name>: <message>` and
 * the usage on stderr and exit status 2, answer --help with the usage on stdout and status 0, and
 * turn SIGINT / SIGTERM into an AbortSignal for the long-running part.
 */
import path from 'node:path';
import { parseArgs } from 'node:util';
import type { ParseArgsConfig } from 'node:util';

type OptionsConfig = NonNullable<ParseArgsConfig['options']>;

const HELP_OPTION = { help: { type: 'boolean', short: 'h' } } as const;

type Config<O extends OptionsConfig, P extends boolean> = {
  args: string[];
  options: O & typeof HELP_OPTION;
  strict: true;
  allowPositionals: P;
};
type ParsedValues<O extends OptionsConfig, P extends boolean> = ReturnType<typeof parseArgs<Config<O, P>>>['values'];

type WithRequired<V, R extends PropertyKey> = V & { [K in R & keyof V]-?: Exclude<V[K], undefined> };

/** The parsed flags (the `required` ones narrowed to present) and the positional arguments. */
export interface CommandArgs<O extends OptionsConfig, R extends keyof O, P extends boolean> {
  values: WithRequired<ParsedValues<O, P>, R>;
  positionals: string[];
}

export interface CommandArgsOptions<R, P extends boolean> {
  /** Flags that must be given (a flag given as '' counts as missing). */
  required?: readonly R[];
  /** Whether the command takes positional arguments (default false: one is a usage error). */
  positionals?: P;
}

/**
 * An integer option in [min, max], or undefined when absent; decimal digits only (no '', '1e3', '0x10', '2.0'), so
 * what is accepted is what the user typed. Throws an Error naming the flag, for the command's usage error.
 */
export function intOption(name: string, value: string | undefined, min: number, max: number = Number.MAX_SAFE_INTEGER): number | undefined {
  if (value === undefined) return undefined;
  const n = /^\d+$/.test(value) ? Number(value) : NaN;
  if (!(n >= min && n <= max)) throw new Error(`--${name} must be an integer from ${min} to ${max}, got '${value}'`);
  return n;
}

/**
 * A prompt's key given as --key (`horizon show`, `horizon compare`), or undefined when absent: intOption's digits,
 * with the message these commands give. Throws an Error for the command's usage error.
 */
export function keyOption(value: string | undefined): number | undefined {
  try {
    return intOption('key', value, 0);
  } catch {
    throw new Error(`--key takes a prompt's key, a whole number, not ${JSON.stringify(value)}`);
  }
}

/**
 * The data folder every command takes as --data-dir (prepare and assets also as --dir, their first spelling):
 * resolved, else the default. Throws when both spellings name different folders.
 */
export function dataDirOption(values: { readonly 'data-dir'?: string; readonly dir?: string }, fallback: () => string): string {
  const a = values['data-dir'];
  const b = values.dir;
  if (a !== undefined && b !== undefined && path.resolve(a) !== path.resolve(b)) {
    throw new Error(`--data-dir and --dir name different folders ('${a}', '${b}'); give one`);
  }
  return path.resolve(a ?? b ?? fallback());
}

/** Prints `horizon <name>: <message>` and the usage to stderr; returns the usage-error exit status, 2. */
export function usageError(name: string, usage: string, message: string): number {
  console.error(`horizon ${name}: ${message}\n${usage}`);
  return 2;
}

/** "--a is required", "--a and --b are required", "--a, --b and --c are required". */
export function requiredMessage(flags: readonly string[]): string {
  const names = flags.map((f) => `--${f}`);
  const last = names.pop();
  return names.length === 0 ? `${last} is required` : `${names.join(', ')} and ${last} are required`;
}

/**
 * Parses `args` strictly against `options` plus --help/-h. Returns the parsed arguments, or the exit
 * status the command should return at once: 2 after printing a usage error (a parse error, or a
 * missing `required` flag), 0 after printing the usage for --help.
 */
export function parseCommandArgs<O extends OptionsConfig, R extends keyof O & string = never, P extends boolean = false>(
  name: string,
  usage: string,
  args: string[],
  options: O,
  { required = [], positionals }: CommandArgsOptions<R, P> = {},
): CommandArgs<O, R, P> | number {
  let parsed;
  try {
    parsed = parseArgs({ args, options: { ...options, ...HELP_OPTION }, strict: true, allowPositionals: positionals ?? false });
  } catch (e) {
    return usageError(name, usage, e instanceof Error ? e.message : String(e));
  }
  const values = parsed.values as Record<string, string | boolean | undefined>;
  if (values.help) {
    console.log(usage);
    return 0;
  }
  if (required.some((flag) => !values[flag])) return usageError(name, usage, requiredMessage(required));
  return parsed as unknown as CommandArgs<O, R, P>;
}

export interface SignalAbort {
  /** Aborted on the first of the signals. */
  signal: AbortSignal;
  /** Aborts as the first signal would, without onAbort (another cause of stopping). */
  abort(): void;
  /** Removes the signal listeners. */
  dispose(): void;
}

export interface AbortOnSignalsOptions {
  /** Called on the first signal, just before the abort. */
  onAbort?: (signal: NodeJS.Signals) => void;
  /**
   * Called on each later signal. Without it each listener is a `once` listener, so after the abort a
   * repeated signal gets Node's default handling; with it the listeners stay until dispose().
   */
  onRepeat?: (signal: NodeJS.Signals) => void;
}

let closedStdoutHandler: (() => void) | null = null;
let stdoutGone = false;

/**
 * For the entry points: a reader that stops early (`horizon verify X | head -1`) is not an error of the command, which
 * ends quietly — unless a long command asked to stop as on Ctrl-C (whenStdoutCloses), so that it is not cut off with a
 * run left "running" and exit status 0.
 */
export function endQuietlyOnClosedStdout(): void {
  process.stdout.on('error', (e: NodeJS.ErrnoException) => {
    if (e.code !== 'EPIPE') throw e;
    if (stdoutGone) return;
    const handler = closedStdoutHandler;
    if (handler) {
      stdoutGone = true;
      handler();
      return;
    }
    process.exit(typeof process.exitCode === 'number' ? process.exitCode : 0);
  });
}

/** Calls `fn` once if the reader of stdout goes away (with endQuietlyOnClosedStdout in place); returns the undo. */
export function whenStdoutCloses(fn: () => void): () => void {
  closedStdoutHandler = fn;
  return () => {
    if (closedStdoutHandler === fn) closedStdoutHandler = null;
  };
}

/** An AbortSignal aborted by the first of `signals` sent to this process. */
export function abortOnSignals(signals: readonly NodeJS.Signals[], { onAbort, onRepeat }: AbortOnSignalsOptions = {}): SignalAbort {
  const controller = new AbortController();
  const listener = (signal: NodeJS.Signals): void => {
    if (controller.signal.aborted) {
      onRepeat?.(signal);
      return;
    }
    onAbort?.(signal);
    controller.abort();
  };
  for (const s of signals) {
    if (onRepeat) process.on(s, listener);
    else process.once(s, listener);
  }
  return {
    signal: controller.signal,
    abort: () => {
      if (!controller.signal.aborted) controller.abort();
    },
    dispose: () => {
      for (const s of signals) process.off(s, listener);
    },
  };
}

/**
 * For a command another process started and reads (`--progress-json`): calls `abort` once this process is orphaned
 * (its parent exited, even killed, so it was re-parented), polling the parent pid every `everyMs`. Returns the stop.
 */
export function abortWhenOrphaned(abort: () => void, everyMs = 250, ppid: () => number = () => process.ppid): () => void {
  const parent = ppid();
  const timer = setInterval(() => {
    if (ppid() !== parent) {
      clearInterval(timer);
      abort();
    }
  }, everyMs);
  timer.unref();
  return () => clearInterval(timer);
}

