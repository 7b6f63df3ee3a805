import { afterEach, describe, expect, expectTypeOf, it, vi } from 'vitest';

import path from 'node:path';

import { abortOnSignals, abortWhenOrphaned, dataDirOption, intOption, keyOption, parseCommandArgs, requiredMessage, usageError } from '../../../../electron/cli/command-args.js';

const USAGE = 'usage: horizon demo --model DIR --out F [--json] [--weights W]';
const OPTIONS = {
  model: { type: 'string' },
  out: { type: 'string' },
  json: { type: 'boolean' },
  weights: { type: 'string', default: 'int4' },
} as const;

function capture<T>(fn: () => T): { result: T; out: string[]; err: string[] } {
  const out: string[] = [];
  const err: string[] = [];
  vi.spyOn(console, 'log').mockImplementation((...a: unknown[]) => void out.push(a.join(' ')));
  vi.spyOn(console, 'error').mockImplementation((...a: unknown[]) => void err.push(a.join(' ')));
  return { result: fn(), out, err };
}

afterEach(() => vi.restoreAllMocks());

describe('parseCommandArgs', () => {
  it.each([
    {
      name: 'all required flags',
      args: ['--model', 'm', '--out', 'o'],
      result: { values: { model: 'm', out: 'o', weights: 'int4' }, positionals: [] },
    },
    {
      name: 'a boolean and an overridden default',
      args: ['--model', 'm', '--out=o', '--json', '--weights', 'bf16'],
      result: { values: { model: 'm', out: 'o', json: true, weights: 'bf16' }, positionals: [] },
    },
    { name: '--help', args: ['--help'], result: 0, out: [USAGE] },
    { name: '-h wins over missing flags', args: ['-h'], result: 0, out: [USAGE] },
    { name: 'an unknown flag', args: ['--bogus'], result: 2, err: /^horizon demo: Unknown option '--bogus'.*\nusage: horizon demo/s },
    { name: 'a string flag without its value', args: ['--model'], result: 2, err: /^horizon demo: Option '--model <value>' argument missing\nusage:/ },
    { name: 'a positional', args: ['--model', 'm', '--out', 'o', 'extra'], result: 2, err: /^horizon demo: Unexpected argument 'extra'/ },
    { name: 'both required flags missing', args: [], result: 2, err: `horizon demo: --model and --out are required\n${USAGE}` },
    { name: 'one required flag missing', args: ['--model', 'm'], result: 2, err: `horizon demo: --model and --out are required\n${USAGE}` },
    { name: 'an empty required flag', args: ['--model', '', '--out', 'o'], result: 2, err: `horizon demo: --model and --out are required\n${USAGE}` },
  ])('$name', ({ args, result, out = [], err }) => {
    const r = capture(() => parseCommandArgs('demo', USAGE, args, OPTIONS, { required: ['model', 'out'] }));
    expect(r.result).toEqual(result);
    expect(r.out).toEqual(out);
    if (err === undefined) expect(r.err).toEqual([]);
    else if (typeof err === 'string') expect(r.err).toEqual([err]);
    else expect(r.err.join('\n')).toMatch(err);
  });

  it.each([
    { args: ['a.zip'], positionals: ['a.zip'] },
    { args: ['a.zip', '--punkt', 'p', 'b.zip'], positionals: ['a.zip', 'b.zip'] },
    { args: [], positionals: [] },
  ])('takes positionals when asked: $args', ({ args, positionals }) => {
    const r = capture(() => parseCommandArgs('verify', USAGE, args, { punkt: { type: 'string' } }, { positionals: true }));
    expect(r.result).toMatchObject({ positionals });
    expect(r.err).toEqual([]);
  });

  it('narrows the required flags and keeps the others optional', () => {
    const parsed = parseCommandArgs('demo', USAGE, ['--model', 'm', '--out', 'o'], OPTIONS, { required: ['model'] });
    if (typeof parsed === 'number') throw new Error('expected values');
    expectTypeOf(parsed.values.model).toEqualTypeOf<string>();
    expectTypeOf(parsed.values.out).toEqualTypeOf<string | undefined>();
    expectTypeOf(parsed.values.json).toEqualTypeOf<boolean | undefined>();
    expectTypeOf(parsed.values.weights).toEqualTypeOf<string>();
  });
});

describe('requiredMessage / usageError', () => {
  it.each([
    [['model'], '--model is required'],
    [['model', 'tokens'], '--model and --tokens are required'],
    [['input', 'responses', 'out'], '--input, --responses and --out are required'],
  ])('%j', (flags, message) => {
    expect(requiredMessage(flags)).toBe(message);
  });

  it('prints the message and the usage to stderr and gives 2', () => {
    const r = capture(() => usageError('verify', USAGE, 'give exactly one RESULT.zip'));
    expect(r).toEqual({ result: 2, out: [], err: [`horizon verify: give exactly one RESULT.zip\n${USAGE}`] });
  });
});

describe('abortOnSignals', () => {
  const listeners = (s: NodeJS.Signals) => process.listenerCount(s);

  it.each([
    { signals: ['SIGINT'] as NodeJS.Signals[], send: 'SIGINT' as const },
    { signals: ['SIGTERM', 'SIGINT'] as NodeJS.Signals[], send: 'SIGTERM' as const },
    { signals: ['SIGTERM', 'SIGINT'] as NodeJS.Signals[], send: 'SIGINT' as const },
  ])('$signals aborts on $send and dispose() removes the listeners', ({ signals, send }) => {
    const before = signals.map(listeners);
    const onAbort = vi.fn();
    const a = abortOnSignals(signals, { onAbort });
    expect(signals.map(listeners)).toEqual(before.map((n) => n + 1));
    expect(a.signal.aborted).toBe(false);
    process.emit(send, send);
    expect(a.signal.aborted).toBe(true);
    expect(onAbort).toHaveBeenCalledWith(send);
    // a once listener: the signal that aborted no longer has one
    expect(listeners(send)).toBe(before[signals.indexOf(send)]);
    a.dispose();
    expect(signals.map(listeners)).toEqual(before);
  });

  it('with onRepeat keeps listening and calls it on a later signal, not onAbort', () => {
    const before = listeners('SIGINT');
    const onAbort = vi.fn();
    const onRepeat = vi.fn();
    const a = abortOnSignals(['SIGINT'], { onAbort, onRepeat });
    process.emit('SIGINT', 'SIGINT');
    expect(a.signal.aborted).toBe(true);
    expect(listeners('SIGINT')).toBe(before + 1);
    process.emit('SIGINT', 'SIGINT');
    expect(onAbort).toHaveBeenCalledTimes(1);
    expect(onRepeat).toHaveBeenCalledTimes(1);
    a.dispose();
    expect(listeners('SIGINT')).toBe(before);
  });

  it('abort() aborts as a signal would, without onAbort, and only once', () => {
    const before = listeners('SIGTERM');
    const onAbort = vi.fn();
    const a = abortOnSignals(['SIGTERM'], { onAbort });
    const aborted = vi.fn();
    a.signal.addEventListener('abort', aborted);
    a.abort();
    a.abort();
    expect(a.signal.aborted).toBe(true);
    expect(aborted).toHaveBeenCalledTimes(1);
    expect(onAbort).not.toHaveBeenCalled();
    a.dispose();
    expect(listeners('SIGTERM')).toBe(before);
  });

  it('dispose() before any signal leaves the signal unaborted', () => {
    const before = listeners('SIGTERM');
    const a = abortOnSignals(['SIGTERM']);
    a.dispose();
    expect(listeners('SIGTERM')).toBe(before);
    expect(a.signal.aborted).toBe(false);
  });
});

describe('intOption', () => {
  it.each([
    [undefined, undefined],
    ['0', 0],
    ['7', 7],
    ['0010', 10],
    ['65535', 65535],
  ])('%j -> %j', (value, expected) => {
    expect(intOption('port', value, 0, 65535)).toBe(expected);
  });

  it.each(['', ' 7', '7 ', '-1', '1e3', '0x10', '2.0', '65536', 'seven'])('refuses %j, naming the flag and the range', (value) => {
    expect(() => intOption('port', value, 0, 65535)).toThrow(`--port must be an integer from 0 to 65535, got '${value}'`);
  });
});

describe('keyOption', () => {
  it.each([
    [undefined, undefined],
    ['0', 0],
    ['1000', 1000],
    ['9007199254740991', 9007199254740991],
  ])('%j -> %j', (value, expected) => {
    expect(keyOption(value)).toBe(expected);
  });

  it.each(['', '-1', '10a', '1e3', '2.0', '9007199254740992'])('refuses %j with the key commands\' message', (value) => {
    expect(() => keyOption(value)).toThrow(`--key takes a prompt's key, a whole number, not ${JSON.stringify(value)}`);
  });
});

describe('dataDirOption', () => {
  const fallback = vi.fn(() => '/default/data');
  afterEach(() => fallback.mockClear());

  it('resolves --data-dir, else --dir, else the default', () => {
    expect(dataDirOption({ 'data-dir': 'rel/a' }, fallback)).toBe(path.resolve('rel/a'));
    expect(dataDirOption({ dir: 'rel/b' }, fallback)).toBe(path.resolve('rel/b'));
    expect(fallback).not.toHaveBeenCalled();
    expect(dataDirOption({}, fallback)).toBe('/default/data');
  });

  it('takes both spellings when they name one folder, however written', () => {
    expect(dataDirOption({ 'data-dir': '/tmp/d/', dir: '/tmp/x/../d' }, fallback)).toBe('/tmp/d');
    expect(dataDirOption({ 'data-dir': path.resolve('rel'), dir: 'rel' }, fallback)).toBe(path.resolve('rel'));
  });

  it('refuses both spellings naming different folders', () => {
    expect(() => dataDirOption({ 'data-dir': '/tmp/a', dir: '/tmp/b' }, fallback)).toThrow(
      "--data-dir and --dir name different folders ('/tmp/a', '/tmp/b'); give one",
    );
  });
});

describe('endQuietlyOnClosedStdout / whenStdoutCloses', () => {
  /** A fresh copy of the module (its state is per process) and the stdout 'error' listener it installed. */
  async function install() {
    vi.resetModules();
    const mod = await import('../../../../electron/cli/command-args.js');
    const before = process.stdout.listeners('error');
    mod.endQuietlyOnClosedStdout();
    const listener = process.stdout.listeners('error').find((l) => !before.includes(l)) as (e: NodeJS.ErrnoException) => void;
    process.stdout.off('error', listener);
    const exit = vi.spyOn(process, 'exit').mockImplementation(() => undefined as never);
    const epipe = () => listener(Object.assign(new Error('write EPIPE'), { code: 'EPIPE' }));
    return { mod, listener, exit, epipe };
  }
  const savedExitCode = process.exitCode;
  afterEach(() => {
    process.exitCode = savedExitCode;
  });

  it('ends the process with its exit status so far when the reader goes away', async () => {
    const { exit, epipe } = await install();
    epipe();
    expect(exit).toHaveBeenLastCalledWith(0);
    process.exitCode = 3;
    epipe();
    expect(exit).toHaveBeenLastCalledWith(3);
  });

  it('rethrows a stdout error that is not EPIPE', async () => {
    const { listener, exit } = await install();
    const error = Object.assign(new Error('write EIO'), { code: 'EIO' });
    expect(() => listener(error)).toThrow(error);
    expect(exit).not.toHaveBeenCalled();
  });

  it('calls the handler of a long command instead, once', async () => {
    const { mod, exit, epipe } = await install();
    const handler = vi.fn();
    mod.whenStdoutCloses(handler);
    epipe();
    epipe();
    expect(handler).toHaveBeenCalledTimes(1);
    expect(exit).not.toHaveBeenCalled();
  });

  it("an earlier command's undo leaves a later command's handler in place; its own undo removes it", async () => {
    const { mod, exit, epipe } = await install();
    const first = vi.fn();
    const second = vi.fn();
    const undoFirst = mod.whenStdoutCloses(first);
    const undoSecond = mod.whenStdoutCloses(second);
    undoFirst();
    undoSecond();
    epipe();
    expect(exit).toHaveBeenCalledTimes(1);
    mod.whenStdoutCloses(second);
    undoFirst();
    epipe();
    expect(second).toHaveBeenCalledTimes(1);
    expect(first).not.toHaveBeenCalled();
  });
});

describe('abortWhenOrphaned', () => {
  it('aborts once the parent pid changes, and not before; stop ends the watch', () => {
    vi.useFakeTimers();
    try {
      let ppid = 100;
      let aborted = 0;
      abortWhenOrphaned(() => aborted++, 250, () => ppid);
      vi.advanceTimersByTime(1000);
      expect(aborted).toBe(0);
      ppid = 1;
      vi.advanceTimersByTime(250);
      expect(aborted).toBe(1);
      vi.advanceTimersByTime(1000);
      expect(aborted).toBe(1);
      let again = 0;
      const stop = abortWhenOrphaned(() => again++, 250, () => ppid);
      stop();
      ppid = 2;
      vi.advanceTimersByTime(1000);
      expect(again).toBe(0);
    } finally {
      vi.useRealTimers();
    }
  });
});
