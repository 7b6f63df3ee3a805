/**
 * An instruction's arguments as the response detail and `horizon show` write them: `relation="at least",
 * num_words=300`, the unset ones (null in the dataset) left out; empty when none is set.
 */
export function instructionArgsText(kwargs: Readonly<Record<string, unknown>>): string {
  return Object.entries(kwargs)
    .filter(([, v]) => v !== null && v !== undefined)
    .map(([k, v]) => `${k}=${JSON.stringify(v)}`)
    .join(', ');
}
