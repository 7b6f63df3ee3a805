import { afterEach, describe, expect, expectTypeOf, it, vi } from 'vitest';

import { abortOnSignals, intOption, parseCommandArgs, requiredMessage, usageError } from '../../../../electron/cli/command-args.js';

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
