import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';

import { REPO_ROOT } from '../../node/app-root.js';
import { PrepError } from './prep-error.js';
import { NATIVE_STATUS_CODES, isNativeStatus, type NativeStatus } from '../../common/native-status.js';

/** The program and leading arguments that run `horizon`; `pack --model … --progress-json` is appended. */
export type PackerCommand = { readonly command: string; readonly args: readonly string[]; readonly env?: Record<string, string> };

/** A started packer as runPacker sees it: a Node child process, or an Electron utilityProcess in the app. */
export interface PackerProcess {
  readonly stdout: NodeJS.ReadableStream;
  readonly stderr: NodeJS.ReadableStream;
  /** Once the process has exited and its output has been read to the end: the exit code, or the signal. */
  onClose(handler: (code: number | null, signal: string | null) => void): void;
  /** The process could not be started. */
  onError(handler: (error: Error) => void): void;
  kill(): void;
}

/** Starts the `horizon` CLI with these arguments (`pack --model … --progress-json`). */
export type PackerLauncher = (args: readonly string[]) => PackerProcess;

/** The CLI this app runs the packer from: the TypeScript sources of a checkout, else the compiled `bin.js`. */
export function packerEntry(root: string = REPO_ROOT): string {
  const sources = path.join(root, 'scripts', 'horizon.mjs');
  return fs.existsSync(sources) ? sources : path.join(root, 'out', 'electron', 'cli', 'bin.js');
}

/**
 * The packer as a Node child process of `process.execPath` (the CLI and `horizon serve`, which run under Node). Under
 * Electron that binary is the app itself (its runAsNode fuse is off): the shell passes utilityProcessPacker instead.
 */
export function defaultPackerCommand(root: string = REPO_ROOT, versions: NodeJS.ProcessVersions = process.versions): PackerCommand {
  if (versions.electron) throw new Error('under Electron the packer runs as a utilityProcess (utilityProcessPacker)');
  return { command: process.execPath, args: [packerEntry(root)] };
}

/** Launches a PackerCommand as a child process. */
export function commandPacker(packer: PackerCommand): PackerLauncher {
  return (args) => {
    const child = spawn(packer.command, [...packer.args, ...args], {
      env: { ...process.env, ...packer.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    return {
      stdout: child.stdout,
      stderr: child.stderr,
      onClose: (h) => void child.once('close', (code, signal) => h(code, signal)),
      onError: (h) => void child.once('error', h),
      kill: () => void child.kill('SIGTERM'),
    };
  };
}

/** The subset of Electron's `utilityProcess` the packer uses, so this file does not import electron. */
export interface PackerUtilityProcess {
  fork(
    modulePath: string,
    args?: string[],
    options?: { serviceName?: string; stdio?: 'pipe' },
  ): {
    readonly stdout: NodeJS.ReadableStream | null;
    readonly stderr: NodeJS.ReadableStream | null;
    once(event: 'exit', listener: (code: number) => void): unknown;
    kill(): boolean;
  };
}

/**
 * Launches the packer as an Electron utilityProcess: Node in a child of the app without ELECTRON_RUN_AS_NODE, so the
 * packaged binary's runAsNode fuse can stay off. Its exit may come before its last output is read, so the close is
 * reported once both have happened.
 */
export function utilityProcessPacker(utilityProcess: PackerUtilityProcess, entry: string): PackerLauncher {
  return (args) => {
    const child = utilityProcess.fork(entry, [...args], { serviceName: 'Horizon packer', stdio: 'pipe' });
    const { stdout, stderr } = child;
    if (!stdout || !stderr) throw new Error(`utilityProcess ${entry} has no output pipes`);
    const ended = (stream: NodeJS.ReadableStream) =>
      new Promise<void>((resolve) => {
        stream.once('end', resolve);
        stream.once('close', resolve);
        stream.once('error', () => resolve());
      });
    const exited = new Promise<number>((resolve) => void child.once('exit', resolve));
    const closed = Promise.all([exited, ended(stdout), ended(stderr)]).then(([code]) => code);
    return {
      stdout,
      stderr,
      onClose: (h) => void closed.then((code) => h(code, null)),
      onError: () => undefined,
      kill: () => void child.kill(),
    };
  };
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
  /** How to start the packer (a command, or an Electron utilityProcess); the Node CLI of this checkout by default. */
  readonly packer?: PackerCommand | PackerLauncher;
};

/** How a CLI child ended: its exit code or signal, whether it printed `{"type":"done"}`, and its last stderr. */
export interface CliChildEnd {
  readonly code: number | null;
  readonly signalName: string | null;
  readonly sawDone: boolean;
  readonly stderrTail: string;
}

/**
 * Starts `horizon <args>` through `launch` and hands each JSON object it prints on stdout to `onMessage` (other lines
 * are skipped); aborting `signal` kills it. Resolves once it has exited and its output was read; rejects when it
 * could not be started or run.
 */
export async function runCliChild(
  launch: PackerLauncher,
  args: readonly string[],
  opts: { readonly onMessage?: (msg: Record<string, unknown>) => void; readonly signal?: AbortSignal },
): Promise<CliChildEnd> {
  const child: PackerProcess = launch(args);
  let stderrTail = '';
  let sawDone = false;
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (text: string) => {
    stderrTail = (stderrTail + text).slice(-2000);
  });
  readline.createInterface({ input: child.stdout }).on('line', (line) => {
    let msg: unknown;
    try {
      msg = JSON.parse(line);
    } catch {
      return;
    }
    if (typeof msg !== 'object' || msg === null) return;
    if ((msg as { type?: unknown }).type === 'done') sawDone = true;
    opts.onMessage?.(msg as Record<string, unknown>);
  });
  const onAbort = (): void => child.kill();
  opts.signal?.addEventListener('abort', onAbort, { once: true });
  try {
    const [code, signalName] = await new Promise<[number | null, string | null]>((resolve, reject) => {
      child.onError(reject);
      child.onClose((c, sig) => resolve([c, sig]));
    });
    return { code, signalName, sawDone, stderrTail };
  } finally {
    opts.signal?.removeEventListener('abort', onAbort);
  }
}

/**
 * Runs the INT4 packer in a child process (the main process never loads the native addon) and relays its JSON
 * progress lines; resolves once it printed `{"type":"done"}` and exited 0.
 */
export async function runPacker(opts: RunPackerOptions): Promise<void> {
  const packer = opts.packer ?? defaultPackerCommand();
  const launch = typeof packer === 'function' ? packer : commandPacker(packer);
  const args = [
    'pack',
    '--model', opts.source,
    '--out', opts.out,
    '--repo', opts.repo,
    '--revision', opts.commit,
    '--progress-json',
    ...(opts.groupSize !== undefined ? ['--group-size', String(opts.groupSize)] : []),
  ];
  if (opts.signal?.aborted) throw new PrepError('CANCELLED', `pack ${opts.out}: cancelled`);
  const what = typeof packer === 'function' ? 'the packer' : packer.command;
  let failure: { readonly status: NativeStatus; readonly message: string } | undefined;
  try {
    const { code, signalName, sawDone, stderrTail } = await runCliChild(launch, args, {
      signal: opts.signal,
      onMessage: (msg) => {
        if (msg.type === 'progress' && (msg.phase === 'pack' || msg.phase === 'hash')) {
          opts.onProgress?.({ phase: msg.phase, doneBytes: Number(msg.doneBytes) || 0, totalBytes: Number(msg.totalBytes) || 0 });
        }
        if (msg.type === 'error' && isNativeStatus(msg.code) && typeof msg.message === 'string') {
          failure = { status: msg.code, message: msg.message };
        }
      },
    });
    if (opts.signal?.aborted) throw new PrepError('CANCELLED', `pack ${opts.out}: cancelled (the next start packs again)`);
    if (code !== 0 || !sawDone) {
      const why = code !== 0 ? `exit ${code ?? signalName}` : 'no {"type":"done"} line';
      // The runtime said what failed: its code, unless it is a write the disk had no room for (the OS's words).
      if (failure && failure.status !== 'io_error') {
        throw new PrepError(NATIVE_STATUS_CODES[failure.status], `pack ${opts.source} → ${opts.out}: ${failure.message}`);
      }
      if (/ENOSPC|No space left/i.test(stderrTail)) {
        throw new PrepError('DISK_FULL', `pack ${opts.out}: the disk is full (${why}); free some space and start again`);
      }
      throw new PrepError('INTERNAL', `pack ${opts.source} → ${opts.out} failed (${why}): ${stderrTail.trim() || 'no error output'}`);
    }
  } catch (error) {
    if (error instanceof PrepError) throw error;
    throw new PrepError('INTERNAL', `pack: cannot run ${what}: ${(error as Error).message}`, { cause: error });
  }
}
