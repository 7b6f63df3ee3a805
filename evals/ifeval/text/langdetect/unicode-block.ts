// The blocks langdetect's NGram.normalize distinguishes (langdetect/utils/unicode_block.py); every other code point
// is left as it is, so the other 150-odd blocks of that table are not needed.

/** A Unicode block langdetect treats specially. */
export type UnicodeBlock =
  | 'BASIC_LATIN'
  | 'LATIN_1_SUPPLEMENT'
  | 'LATIN_EXTENDED_B'
  | 'ARABIC'
  | 'LATIN_EXTENDED_ADDITIONAL'
  | 'GENERAL_PUNCTUATION'
  | 'HIRAGANA'
  | 'KATAKANA'
  | 'BOPOMOFO'
  | 'BOPOMOFO_EXTENDED'
  | 'CJK_UNIFIED_IDEOGRAPHS'
  | 'HANGUL_SYLLABLES';

const BLOCKS: ReadonlyArray<readonly [UnicodeBlock, number, number]> = [
  ['BASIC_LATIN', 0x0000, 0x007f],
  ['LATIN_1_SUPPLEMENT', 0x0080, 0x00ff],
  ['LATIN_EXTENDED_B', 0x0180, 0x024f],
  ['ARABIC', 0x0600, 0x06ff],
  ['LATIN_EXTENDED_ADDITIONAL', 0x1e00, 0x1eff],
  ['GENERAL_PUNCTUATION', 0x2000, 0x206f],
  ['HIRAGANA', 0x3040, 0x309f],
  ['KATAKANA', 0x30a0, 0x30ff],
  ['BOPOMOFO', 0x3100, 0x312f],
  ['BOPOMOFO_EXTENDED', 0x31a0, 0x31bf],
  ['CJK_UNIFIED_IDEOGRAPHS', 0x4e00, 0x9fff],
  ['HANGUL_SYLLABLES', 0xac00, 0xd7af],
];

/** The block of code point `cp` among those above, or undefined for any other block. */
export function unicodeBlock(cp: number): UnicodeBlock | undefined {
  for (const [name, start, end] of BLOCKS) if (cp >= start && cp <= end) return name;
  return undefined;
}
