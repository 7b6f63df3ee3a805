/** Bad command lines end with exit 2 and the usage before any work (no device probe, no download). */
import os from 'node:os';
import path from 'node:path';

import { afterEach, describe, expect, it, vi } from 'vitest';

import { run as devices } from '../../../../../electron/cli/commands/devices.js';
import { run as generate } from '../../../../../electron/cli/commands/generate.js';
import { run as importZip } from '../../../../../electron/cli/commands/import.js';
import { run as logits } from '../../../../../electron/cli/commands/logits.js';
import { run as pack } from '../../../../../electron/cli/commands/pack.js';
import { main } from '../../../../../electron/cli/index.js';
import { parseModelFlags, parseTokenList } from '../../../../../electron/cli/commands/logits.js';
import { run as prepare } from '../../../../../electron/cli/commands/prepare.js';

describe('usage errors', () => {
  afterEach(() => vi.restoreAllMocks());

  it.each([
    ['devices with an unknown flag', () => devices(['--bogus']), /Unknown option '--bogus'/],
    ['devices with an argument', () => devices(['extra']), /Unexpected argument 'extra'/],
    ['prepare with an empty --model (it used to download the default model)', () => prepare(['--model', '']), /--model must be REPO or REPO@REV, not empty/],
    ['prepare with --data-dir and --dir naming different folders', () => prepare(['--data-dir', '/tmp/a', '--dir', '/tmp/b']), /--data-dir and --dir name different folders/],
    ['prepare with a --hub-url that is not http(s)', () => prepare(['--hub-url', 'huggingface.co']), /--hub-url must be an http\(s\) URL, got 'huggingface.co'/],
    ['prepare with an odd --group-size', () => prepare(['--group-size', '33']), /--group-size must be even, got 33/],
    ['prepare with a --group-size that is not a number', () => prepare(['--group-size', '3e1']), /--group-size must be an integer from 2 to/],
    ['generate with --device on the CPU backend (it was ignored)', () => generate(['--model', '/nonexistent', '--tokens', '1', '--device', '1']), /--device applies to --backend cuda only/],
    ['logits with --expert-budget on the CPU backend', () => logits(['--model', '/nonexistent', '--tokens', '1', '--out', '/nonexistent.json', '--expert-budget', '2']), /--expert-budget applies to --backend cuda only/],
    ['generate with a negative --max-new-tokens (before loading the model)', () => generate(['--model', '/nonexistent', '--tokens', '1', '--max-new-tokens=-1']), /--max-new-tokens must be an integer from 0 to 65536, got '-1'/],
    ['logits with bad --threads', () => logits(['--model', '/nonexistent', '--tokens', '1', '--out', '/nonexistent.json', '--threads', 'many']), /--threads must be an integer from 1 to 1024, got 'many'/],
    ['pack with --threads 0 (before touching the model folder)', () => pack(['--model', '/nonexistent', '--out', '/nonexistent-out', '--threads', '0']), /--threads must be an integer from 1 to 1024, got '0'/],
    ['pack with --shard-bytes 0', () => pack(['--model', '/nonexistent', '--out', '/nonexistent-out', '--shard-bytes', '0']), /--shard-bytes must be an integer from 1 to/],
    ['import without a ZIP', () => importZip([]), /give exactly one RESULT\.zip or CAMPAIGN\.zip/],
    ['import with two ZIPs', () => importZip(['a.zip', 'b.zip']), /give exactly one RESULT\.zip or CAMPAIGN\.zip/],
    ['pack with a --group-size that is not a number', () => pack(['--model', '/nonexistent', '--out', '/nonexistent-out', '--group-size', 'big']), /--group-size must be an integer from 1 to/],
  ])('%s', async (_what, call, message) => {
    const err = vi.spyOn(console, 'error').mockImplementation(() => undefined);
    expect(await call()).toBe(2);
    expect(err.mock.calls.map((c) => String(c[0])).join('\n')).toMatch(message);
  });

  it('checks the Hub endpoint from $HF_ENDPOINT as it checks --hub-url, naming where it came from', async () => {
    vi.stubEnv('HF_ENDPOINT', 'huggingface.co');
    try {
      const err = vi.spyOn(console, 'error').mockImplementation(() => undefined);
      const out = vi.spyOn(console, 'log').mockImplementation(() => undefined);
      expect(await prepare(['--list', '--data-dir', path.join(os.tmpdir(), 'horizon-no-such-data-dir')])).toBe(2);
      expect(out).not.toHaveBeenCalled();
      expect(String(err.mock.calls[0]?.[0])).toMatch(/^horizon prepare: HF_ENDPOINT must be an http\(s\) URL, got 'huggingface.co'/);
    } finally {
      vi.unstubAllEnvs();
    }
  });

  it('prints the usage on stderr with 2 for no command, on stdout with 0 for --help', async () => {
    const out = vi.spyOn(console, 'log').mockImplementation(() => undefined);
    const err = vi.spyOn(console, 'error').mockImplementation(() => undefined);
    expect(await main([])).toBe(2);
    expect([out.mock.calls.length, String(err.mock.calls[0]?.[0])]).toEqual([0, expect.stringMatching(/^usage: horizon <command>/)]);
    err.mockClear();
    expect(await main(['--help'])).toBe(0);
    expect([err.mock.calls.length, String(out.mock.calls[0]?.[0])]).toEqual([0, expect.stringMatching(/^usage: horizon <command>/)]);
  });

  it.each([['-h'], ['help']])('prints the usage on stdout with 0 for %s too', async (flag) => {
    const out = vi.spyOn(console, 'log').mockImplementation(() => undefined);
    const err = vi.spyOn(console, 'error').mockImplementation(() => undefined);
    expect(await main([flag])).toBe(0);
    expect([err.mock.calls.length, String(out.mock.calls[0]?.[0])]).toEqual([0, expect.stringMatching(/^usage: horizon <command>/)]);
  });

  it('answers an unknown command with 2, naming it', async () => {
    const out = vi.spyOn(console, 'log').mockImplementation(() => undefined);
    const err = vi.spyOn(console, 'error').mockImplementation(() => undefined);
    expect(await main(['evl', '--model', 'x'])).toBe(2);
    expect(out).not.toHaveBeenCalled();
    expect(err.mock.calls).toEqual([["horizon: unknown command 'evl' (see 'horizon --help')"]]);
  });

  // README: "`npx horizon <command> --help` gives each one's flags and defaults".
  it.each([
    ['serve', ['--port', '--data-dir', '--hub-url', '--static']],
    ['export', ['--out', '--db', '--data-dir']],
    ['import', ['--db', '--data-dir', '--punkt']],
    ['eval', ['--weights', '--backend', '--limit', '--batch', '--max-new-tokens', '--db', '--data-dir', '--out']],
  ])('%s --help explains each flag with its default', async (command, flags) => {
    const out = vi.spyOn(console, 'log').mockImplementation(() => undefined);
    expect(await main([command, '--help'])).toBe(0);
    const lines = out.mock.calls.map((c) => String(c[0])).join('\n').split('\n');
    for (const flag of flags) expect(lines.find((l) => l.trimStart().startsWith(`${flag} `)), flag).toMatch(/\(default/);
  });

  it('names the flag whose token list is bad', () => {
    expect(() => parseTokenList('x', '--stop')).toThrow("--stop must be comma-separated token ids, got 'x'");
    expect(() => parseTokenList('1,-2')).toThrow("--tokens must be comma-separated token ids, got '1,-2'");
    expect(parseTokenList('1, 2,3')).toEqual([1, 2, 3]);
  });

  it('skips empty items of a token list but refuses a list with no id', () => {
    expect(parseTokenList('1,,2,')).toEqual([1, 2]);
    for (const text of ['', ',', ' , ']) expect(() => parseTokenList(text)).toThrow(`--tokens must be comma-separated token ids, got '${text}'`);
  });

  it('checks --weights, --backend and --device for logits and generate', () => {
    expect(parseModelFlags({})).toEqual({ backend: 'cpu', threads: undefined });
    expect(parseModelFlags({ weights: 'int4', backend: 'cuda', threads: '8', device: '2', 'expert-budget': '4' })).toEqual({
      weights: 'int4',
      backend: 'cuda',
      threads: 8,
      device: 2,
    });
    expect(() => parseModelFlags({ weights: 'fp8' })).toThrow("--weights must be bf16 or int4, got 'fp8'");
    expect(() => parseModelFlags({ backend: 'rocm' })).toThrow("--backend must be cpu or cuda, got 'rocm'");
    expect(() => parseModelFlags({ backend: 'cuda', device: 'gpu1' })).toThrow(/--device must be a CUDA device index/);
  });
});
