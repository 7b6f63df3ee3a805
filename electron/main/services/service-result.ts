import type { AppErrorCode, Result } from '../../common/result.js';
import { err, ok } from '../../common/result.js';
import { ImportError } from '../export/import-fields.js';

/** Every AppErrorCode (a Record, so that a code added to the union must be added here). */
const APP_ERROR_CODES: Readonly<Record<AppErrorCode, true>> = {
  BAD_INPUT: true, NOT_FOUND: true, MODEL_NOT_FOUND: true, MODEL_INVALID: true, HASH_MISMATCH: true, NETWORK: true,
  DISK_FULL: true, PERMISSION: true, CANCELLED: true, WORKER_CRASHED: true, DEVICE_FAULT: true, OUT_OF_MEMORY: true,
  UNSUPPORTED: true, INTERNAL: true,
};

/** System and SQLite codes with an AppErrorCode of their own; others (ENOENT, SQLITE_BUSY, …) take the fallback. */
const SYSTEM_CODES: Readonly<Record<string, AppErrorCode>> = {
  ENOSPC: 'DISK_FULL', EDQUOT: 'DISK_FULL', SQLITE_FULL: 'DISK_FULL',
  EACCES: 'PERMISSION', EPERM: 'PERMISSION', EROFS: 'PERMISSION', SQLITE_PERM: 'PERMISSION',
};

/** The AppErrorCode of a thrown error: its own code, else that of what it wraps (`cause`), else `fallback`. */
export function appErrorCode(error: unknown, fallback: AppErrorCode): AppErrorCode {
  let e = error;
  for (let depth = 0; typeof e === 'object' && e !== null && depth < 8; depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string') {
      if (Object.hasOwn(APP_ERROR_CODES, code)) return code as AppErrorCode;
      const mapped = SYSTEM_CODES[code] ?? (code.startsWith('SQLITE_READONLY') ? 'PERMISSION' : undefined);
      if (mapped) return mapped;
    }
    e = (e as { cause?: unknown }).cause;
  }
  return fallback;
}

/** Runs `fn` and wraps its value, turning a thrown error into a Result with its AppErrorCode (see appErrorCode). */
export async function toResult<T>(fn: () => T | Promise<T>, fallback: AppErrorCode = 'INTERNAL'): Promise<Result<T>> {
  try {
    return ok(await fn());
  } catch (e) {
    return err(appErrorCode(e, fallback), e instanceof Error ? e.message : String(e));
  }
}

/** Thrown inside a service to answer with a specific code. */
export class ServiceError extends Error {
  constructor(
    readonly code: AppErrorCode,
    message: string,
  ) {
    super(message);
  }
}

/**
 * Awaits an import, turning the importer's refusal into the BAD_INPUT the pages show; for a ZIP of the other kind,
 * `elsewhere` says where that kind is imported.
 */
export async function refusingImport<T>(importing: Promise<T>, elsewhere: string): Promise<T> {
  try {
    return await importing;
  } catch (e) {
    if (e instanceof ImportError) throw new ServiceError('BAD_INPUT', e.reason === 'other-kind' ? `${e.message}; ${elsewhere}` : e.message);
    throw e;
  }
}
