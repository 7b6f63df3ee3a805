import type { AppErrorCode, Result } from '../../common/result.js';
import { err, ok } from '../../common/result.js';

/** Runs `fn` and wraps its value, turning a thrown error into a Result (its `code` when it carries one). */
export async function toResult<T>(fn: () => T | Promise<T>, fallback: AppErrorCode = 'INTERNAL'): Promise<Result<T>> {
  try {
    return ok(await fn());
  } catch (e) {
    const code = (e as { code?: unknown }).code;
    const known = typeof code === 'string' && /^[A-Z_]+$/.test(code) && code !== 'ENOENT' ? (code as AppErrorCode) : fallback;
    return err(known, e instanceof Error ? e.message : String(e));
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
