import { pyRegex } from './python-compat.js';
import type { PyReFlags } from './python-compat.js';
import { KwargsError } from './types.js';

/** Rejects a negative count, for which the reference would draw a random one. */
export function requireNonNegative(name: string, value: number): number {
  if (value < 0) throw new KwargsError(`${name} must be >= 0, got ${value}`);
  return value;
}

/** Rejects an empty string or list, for which the reference would draw a random keyword. */
export function requireNonEmpty<T extends string | readonly string[]>(name: string, value: T): T {
  if (value.length === 0) throw new KwargsError(`${name} must not be empty`);
  return value;
}

/** Rejects text the reference uses as a regular expression when it is not one the port can run. */
export function requireRegex(name: string, pattern: string, flags: PyReFlags = {}): string {
  try {
    pyRegex(pattern, flags);
  } catch (e) {
    throw new KwargsError(`${name} ${JSON.stringify(pattern)} is not a supported regular expression: ${(e as Error).message}`);
  }
  return pattern;
}
