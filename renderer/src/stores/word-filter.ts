/**
 * Whether every word of `query` (case aside) is in one of `fields`: how History's and the Performance page's filters
 * read what is typed. An empty query matches everything.
 */
export function matchesEveryWord(query: string, fields: readonly string[]): boolean {
  const words = query.toLowerCase().split(/\s+/).filter(Boolean);
  if (words.length === 0) return true;
  const text = fields.join('\n').toLowerCase();
  return words.every((w) => text.includes(w));
}
