import { vi } from 'vitest';

/** Runs a command with console.log / console.error captured: its exit code and what it printed to each. */
export async function captureConsole(command: () => Promise<number>): Promise<{ code: number; out: string; errOut: string }> {
  const out: string[] = [];
  const errOut: string[] = [];
  const log = vi.spyOn(console, 'log').mockImplementation((...a: unknown[]) => void out.push(a.join(' ')));
  const error = vi.spyOn(console, 'error').mockImplementation((...a: unknown[]) => void errOut.push(a.join(' ')));
  try {
    return { code: await command(), out: out.join('\n'), errOut: errOut.join('\n') };
  } finally {
    log.mockRestore();
    error.mockRestore();
  }
}
