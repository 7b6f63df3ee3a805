import type { AppErrorCode } from '../../common/result.js';

/** An error a preparation step throws inside the main process; `code` crosses the IPC boundary in a Result. */
export class PrepError extends Error {
  /** The AppErrorCode the IPC layer reports. */
  readonly code: AppErrorCode;

  constructor(code: AppErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'PrepError';
    this.code = code;
  }
}

/** Maps a filesystem or network failure on `file` to a PrepError with a message naming the file. */
export function toPrepError(error: unknown, file: string): PrepError {
  if (error instanceof PrepError) return error;
  const e = error as NodeJS.ErrnoException;
  if (e?.name === 'AbortError' || e?.code === 'ABORT_ERR') return new PrepError('CANCELLED', `${file}: cancelled`, { cause: error });
  switch (e?.code) {
    case 'ENOSPC':
    case 'EDQUOT':
      return new PrepError('DISK_FULL', `${file}: the disk is full (${e.code}); free some space and start again`, { cause: error });
    case 'EACCES':
    case 'EPERM':
    case 'EROFS':
      return new PrepError('PERMISSION', `${file}: permission denied (${e.code}); choose a data folder you can write to`, {
        cause: error,
      });
    default:
      return new PrepError('INTERNAL', `${file}: ${e?.message ?? String(error)}`, { cause: error });
  }
}

export function throwIfAborted(signal: AbortSignal | undefined, what: string): void {
  if (signal?.aborted) throw new PrepError('CANCELLED', `${what}: cancelled`);
}

/**
 * A gated or private repository refused the request. Said for every screen alike: the CLI adds where its token goes
 * (--token, HF_TOKEN), the app has its access token field beside the message.
 */
export function gatedRepoError(where: string, status: number, withToken: boolean): PrepError {
  return new PrepError(
    'PERMISSION',
    `${where}: the repository is gated or private (HTTP ${status}); ${withToken ? 'the access token given has no access to it (request access on the model page)' : 'it needs an access token'}`,
  );
}
