import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';

import { REPO_ROOT } from '../../node/app-root.js';
import { PrepError } from './prep-error.js';

/** The program and leading arguments that run `horizon`; `pack --model … --progress-json` is appended. */
export type PackerCommand = { readonly command: string; readonly args: readonly string[]; readonly env?: Record<string, string> };

/**
 * The `horizon` CLI of this app: `scripts/horizon.mjs` (TypeScript sources through tsx) in a checkout, else the
 * compiled `out/electron/cli/bin.js` that a packaged app ships. Under Electron, ELECTRON_RUN_AS_NODE makes the
 * binary act as Node.
 */
export function defaultPackerCommand(root: string = REPO_ROOT): PackerCommand {
  const sources = path.join(root, 'scripts', 'horizon.mjs');
  const entry = fs.existsSync(sources) ? sources : path.join(root, 'out', 'electron', 'cli', 'bin.js');
  return { command: process.execPath, args: [entry], env: { ELECTRON_RUN_AS_NODE: '1' } };
}

export type PackProgress = { readonly phase: 'pack' | 'hash'; readonly doneBytes: number; readonly totalBytes: number };

export type RunPackerOptions = {
  readonly source: string;
  readonly out: string;
  readonly repo: string;
  readonly commit: string;
  /** Passed as `--group-size` when set; otherwise the packer's default rule applies. */
  readonly groupSize?: number;
  readonly signal?: AbortSignal;
  readonly onProgress?: (p: PackProgress) => void;
  readonly packer?: PackerCommand;
};

/**
 * Runs the INT4 packer in a child process (the main process never loads the native addon) and relays its JSON
 * progress lines; resolves once it printed `{"type":"done"}` and exited 0.
 */
export async function runPacker(opts: RunPackerOptions): Promise<void> {
  const packer = opts.packer ?? defaultPackerCommand();
  const args = [
    ...packer.args,
    'pack',
    '--model', opts.source,
    '--out', opts.out,
    '--repo', opts.repo,
    '--revision', opts.commit,
    '--progress-json',
    ...(opts.groupSize !== undefined ? ['--group-size', String(opts.groupSize)] : []),
  ];
  if (opts.signal?.aborted) throw new PrepError('CANCELLED', `pack ${opts.out}: cancelled`);
  const child = spawn(packer.command, args, { env: { ...process.env, ...packer.env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stderrTail = '';
  let sawDone = false;
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (text: string) => {
    stderrTail = (stderrTail + text).slice(-2000);
  });
  const lines = readline.createInterface({ input: child.stdout });
  lines.on('line', (line) => {
    let msg: { type?: unknown; phase?: unknown; doneBytes?: unknown; totalBytes?: unknown };
    try {
      msg = JSON.parse(line) as typeof msg;
    } catch {
      return;
    }
    if (msg.type === 'done') sawDone = true;
    else if (msg.type === 'progress' && (msg.phase === 'pack' || msg.phase === 'hash')) {
      opts.onProgress?.({ phase: msg.phase, doneBytes: Number(msg.doneBytes) || 0, totalBytes: Number(msg.totalBytes) || 0 });
    }
  });
  const onAbort = (): void => {
    child.kill('SIGTERM');
  };
  opts.signal?.addEventListener('abort', onAbort, { once: true });
  try {
    const [code, signalName] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve, reject) => {
      child.once('error', reject);
      child.once('close', (c, s) => resolve([c, s]));
    });
    if (opts.signal?.aborted) throw new PrepError('CANCELLED', `pack ${opts.out}: cancelled (the next start packs again)`);
    if (code !== 0 || !sawDone) {
      const why = code !== 0 ? `exit ${code ?? signalName}` : 'no {"type":"done"} line';
      if (/ENOSPC|No space left/i.test(stderrTail)) {
        throw new PrepError('DISK_FULL', `pack ${opts.out}: the disk is full (${why}); free some space and start again`);
      }
      throw new PrepError('INTERNAL', `pack ${opts.source} → ${opts.out} failed (${why}): ${stderrTail.trim() || 'no error output'}`);
    }
  } catch (error) {
    if (error instanceof PrepError) throw error;
    throw new PrepError('INTERNAL', `pack: cannot run ${packer.command}: ${(error as Error).message}`, { cause: error });
  } finally {
    opts.signal?.removeEventListener('abort', onAbort);
  }
}
