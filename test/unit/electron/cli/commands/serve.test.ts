import { afterEach, describe, expect, it, vi } from 'vitest';

import { run } from '../../../../../electron/cli/commands/serve.js';

describe('horizon serve arguments', () => {
  afterEach(() => vi.restoreAllMocks());

  it.each([
    [['--port', 'http'], "--port must be an integer from 0 to 65535, got 'http'"],
    [['--port', '70000'], "--port must be an integer from 0 to 65535, got '70000'"],
    [['--port', ''], "--port must be an integer from 0 to 65535, got ''"],
    [['--port', '8e3'], "--port must be an integer from 0 to 65535, got '8e3'"],
    [['--bogus'], "Unknown option '--bogus'"],
  ])('%j fails with a clear message before starting anything', async (args, message) => {
    const errors: string[] = [];
    vi.spyOn(console, 'error').mockImplementation((m: string) => void errors.push(m));
    expect(await run(args)).toBe(2);
    expect(errors.join('\n')).toContain(message);
  });

  it('refuses a --static folder without index.html', async () => {
    const errors: string[] = [];
    vi.spyOn(console, 'error').mockImplementation((m: string) => void errors.push(m));
    expect(await run(['--static', '/nonexistent-horizon-static'])).toBe(1);
    expect(errors[0]).toBe('horizon serve: /nonexistent-horizon-static/index.html does not exist');
  });
});
