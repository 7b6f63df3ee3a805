/** A plain JSON object (not null, not an array): what parsed files and messages are checked field by field against. */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
