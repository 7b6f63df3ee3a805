/**
 * Where two responses to the same prompt part: the start of the first word in which they differ (greedy decoding on
 * INT4 and on BF16 weights typically agrees for a while, then goes its own way). Null when they are the same text.
 */
export function divergence(a: string, b: string): { readonly at: number; readonly words: number } | null {
  if (a === b) return null;
  let at = 0;
  const end = Math.min(a.length, b.length);
  while (at < end && a.charCodeAt(at) === b.charCodeAt(at)) at++;
  // Back to the word's start, so neither side shows a word cut in two (nor a UTF-16 pair split).
  while (at > 0 && !/\s/.test(a[at - 1]!)) at--;
  return { at, words: a.slice(0, at).split(/\s+/).filter(Boolean).length };
}
