import type { EvalResultRow } from './types.js';

function pyJsonString(s: string): string {
  let out = '"';
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    const ch = s[i]!;
    if (ch === '"') out += '\\"';
    else if (ch === '\\') out += '\\\\';
    else if (ch === '\n') out += '\\n';
    else if (ch === '\r') out += '\\r';
    else if (ch === '\t') out += '\\t';
    else if (ch === '\b') out += '\\b';
    else if (ch === '\f') out += '\\f';
    else if (c < 0x20 || c > 0x7e) out += `\\u${c.toString(16).padStart(4, '0')}`;
    else out += ch;
  }
  return `${out}"`;
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
