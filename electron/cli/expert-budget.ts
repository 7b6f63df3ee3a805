/** The CUDA expert residency budget as loadModel options: bytes of device memory or GPU slots per layer. */
export type ExpertBudget = { readonly expertBudget?: number; readonly expertSlots?: number };

const GIB = 1024 ** 3;

/**
 * Parses `--expert-budget`: "<n>" or "<n>GiB" (device memory for resident experts, fractions allowed) or
 * "<n>slots" (GPU expert slots per layer). Undefined gives {} (the backend's default: full residency when it fits).
 */
export function parseExpertBudget(text: string | undefined): ExpertBudget {
  if (text === undefined) return {};
  const m = /^\s*(\d+(?:\.\d+)?)\s*(gib|g|slots?)?\s*$/i.exec(text);
  if (!m) throw new Error(`--expert-budget must be <GiB> (e.g. 12 or 12GiB) or <N>slots, got '${text}'`);
  const n = Number(m[1]);
  const unit = (m[2] ?? 'gib').toLowerCase();
  if (unit.startsWith('slot')) {
    if (!Number.isInteger(n) || n < 1) throw new Error(`--expert-budget slots must be a positive integer, got '${text}'`);
    return { expertSlots: n };
  }
  if (!(n > 0)) throw new Error(`--expert-budget must be more than 0 GiB, got '${text}'`);
  return { expertBudget: Math.floor(n * GIB) };
}
