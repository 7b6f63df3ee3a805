/** The longest label a run or campaign takes, in UTF-16 code units (what a History row shows in full). */
export const LABEL_MAX = 80;

/**
 * A label as stored: trimmed, null for none. Labels name runs and campaigns for people ("baseline g32", "BF16
 * reference"); the id stays their name everywhere else.
 */
export function normalizeLabel(text: string): string | null {
  const t = text.trim();
  return t === '' ? null : t;
}

/** Why `label` (normalized) cannot be stored, as a sentence; null when it can. */
export function labelRefusal(label: string): string | null {
  if (label === '') return 'A label is not empty (an empty one is no label).';
  if (label.length > LABEL_MAX) return `A label has at most ${LABEL_MAX} characters (this one has ${label.length}).`;
  // Control characters (line breaks, tabs, escapes) would break the one-line places a label is shown in.
  if (/\p{Cc}/u.test(label)) return 'A label is one line of text, without control characters.';
  if (label !== label.trim()) return 'A label does not start or end with spaces.';
  return null;
}

/** `v` when it is a label the app would store, else null (a ZIP's label read for display, not stored). */
export function validLabel(v: unknown): string | null {
  return typeof v === 'string' && labelRefusal(v) === null ? v : null;
}

/** What a label field's text gives: the label (null for none), or why it cannot be one. */
export function readLabel(text: string): { readonly label: string | null; readonly problem: null } | { readonly label: null; readonly problem: string } {
  const label = normalizeLabel(text);
  const problem = label === null ? null : labelRefusal(label);
  return problem === null ? { label, problem } : { label: null, problem };
}
