import type { EvalResultRow } from './types.js';

const ESCAPES: Readonly<Record<string, string>> = { '"': '\\"', '\\': '\\\\', '\n': '\\n', '\r': '\\r', '\t': '\\t', '\b': '\\b', '\f': '\\f' };

// One replace over the string, not a `+=` per character: that builds a rope of one node a character, ~30 bytes each,
// which held 1.7 GB for 541 responses of 50,000 characters until the file was written.
function pyJsonString(s: string): string {
  // Without the u flag each UTF-16 unit matches alone, so an astral character becomes its two \u escapes, as in Python.
  return `"${s.replace(/["\\]|[^\x20-\x7e]/g, (ch) => ESCAPES[ch] ?? `\\u${ch.charCodeAt(0).toString(16).padStart(4, '0')}`)}"`;
}

/**
 * One eval_results line exactly as the reference writes it: `json.dumps` defaults (ASCII-only, ", " and ": "
 * separators) with the keys in `dir()` order, which is alphabetical.
 */
export function formatEvalResultRow(row: EvalResultRow): string {
  const list = <T>(xs: readonly T[], f: (x: T) => string): string => `[${xs.map(f).join(', ')}]`;
  return (
    `{"follow_all_instructions": ${row.follow_all_instructions}, ` +
    `"follow_instruction_list": ${list(row.follow_instruction_list, String)}, ` +
    `"instruction_id_list": ${list(row.instruction_id_list, pyJsonString)}, ` +
    `"prompt": ${pyJsonString(row.prompt)}, ` +
    `"response": ${pyJsonString(row.response)}}`
  );
}

/** A whole eval_results_*.jsonl file: one row per line, newline-terminated. */
export function formatEvalResults(rows: readonly EvalResultRow[]): string {
  return rows.map((r) => `${formatEvalResultRow(r)}\n`).join('');
}
