/** Bad command lines end with exit 2 and the usage before any work (no device probe, no download). */
import { afterEach, describe, expect, it, vi } from 'vitest';

import { run as devices } from '../../../../../electron/cli/commands/devices.js';
import { run as generate } from '../../../../../electron/cli/commands/generate.js';
import { run as logits } from '../../../../../electron/cli/commands/logits.js';
import { run as pack } from '../../../../../electron/cli/commands/pack.js';
import { main } from '../../../../../electron/cli/index.js';
import { parseTokenList } from '../../../../../electron/cli/commands/logits.js';
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
    ['pack with a --group-size that is not a number', () => pack(['--model', '/nonexistent', '--out', '/nonexistent-out', '--group-size', 'big']), /--group-size must be an integer from 1 to/],
  ])('%s', async (_what, call, message) => {
    const err = vi.spyOn(console, 'error').mockImplementation(() => undefined);
    expect(await call()).toBe(2);
    expect(err.mock.calls.map((c) => String(c[0])).join('\n')).toMatch(message);
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

  // README: "`npx horizon <command> --help` gives each one's flags and defaults".
  it.each([
    ['serve', ['--port', '--data-dir', '--hub-url', '--static']],
    ['export', ['--out', '--db', '--data-dir']],
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
});
