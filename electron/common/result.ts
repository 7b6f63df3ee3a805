/** Error codes that cross a process boundary. */
export type AppErrorCode =
  | 'BAD_INPUT'
  | 'NOT_FOUND'
  | 'MODEL_NOT_FOUND'
  | 'MODEL_INVALID'
  | 'HASH_MISMATCH'
  | 'NETWORK'
  | 'DISK_FULL'
  | 'PERMISSION'
  | 'CANCELLED'
  | 'WORKER_CRASHED'
  /** The GPU reported an error that leaves its context unusable: the runtime worker must restart. */
  | 'DEVICE_FAULT'
  /** Host or GPU memory ran out: a smaller batch, context or expert budget may fit. */
  | 'OUT_OF_MEMORY'
  /** This build or device cannot run what was asked (no CUDA in the build, too old a GPU, a model shape). */
  | 'UNSUPPORTED'
  | 'INTERNAL';

export interface AppError {
  readonly code: AppErrorCode;
  readonly message: string;
}

/** The envelope every cross-process call returns; errors are values, never thrown across a boundary. */
export type Result<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly error: AppError };

export function ok<T>(value: T): Result<T> {
  return { ok: true, value };
}

export function err<T = never>(code: AppErrorCode, message: string): Result<T> {
  return { ok: false, error: { code, message } };
}

export function assertNever(x: never): Error {
  return new Error(`unexpected value: ${JSON.stringify(x)}`);
}
