// Expected values come from NLTK 3.8 itself (Debian python3-nltk, the same plain-text Punkt parameters); to add a
// case, run it through PunktSentenceTokenizer in Python and paste [text, sentences] into the table.
import { readFileSync } from 'node:fs';
import path from 'node:path';

import { beforeAll, describe, expect, it } from 'vitest';

import { parsePunktParameters } from '../../../../../evals/ifeval/text/punkt-parameters.js';
import { PunktSentenceTokenizer, punktWordTokenize } from '../../../../../evals/ifeval/text/punkt-sentence-tokenizer.js';
import { digest, loadGolden, PUNKT_DIR } from './golden/golden.js';

let punkt: PunktSentenceTokenizer;

beforeAll(() => {
  const read = (name: string): string => readFileSync(path.join(PUNKT_DIR, name), 'utf8');
  punkt = new PunktSentenceTokenizer(
    parsePunktParameters({
      abbrevTypes: read('abbrev_types.txt'),
      collocations: read('collocations.tab'),
      sentStarters: read('sent_starters.txt'),
      orthoContext: read('ortho_context.tab'),
    }),
  );
});

describe('PunktSentenceTokenizer.tokenize (NLTK 3.8 English)', () => {
  it.each<[string, string[]]>([
    ['Punkt knows that the periods in Mr. Smith and Johann S. Bach\ndo not mark sentence boundaries.  And sometimes sentences\ncan start with non-capitalized words.  i is a good variable\nname.', ['Punkt knows that the periods in Mr. Smith and Johann S. Bach\ndo not mark sentence boundaries.', 'And sometimes sentences\ncan start with non-capitalized words.', 'i is a good variable\nname.']],
    ['(How does it deal with this parenthesis?)  "It should be part of the\nprevious sentence." "(And the same with this one.)" (\'And this one!\')\n"(\'(And (this)) \'?)" [(and this. )]', ['(How does it deal with this parenthesis?)', '"It should be part of the\nprevious sentence."', '"(And the same with this one.)"', '(\'And this one!\')', '"(\'(And (this)) \'?)"', '[(and this. )]']],
    ['Very bad acting!!! I promise.', ['Very bad acting!!!', 'I promise.']],
    ['I met Dr. Smith. However, he left.', ['I met Dr. Smith.', 'However, he left.']],
    ['The U.S. economy grew. The E.U. did not.', ['The U.S. economy grew.', 'The E.U.', 'did not.']],
    ['It was 3. The next was 4.', ['It was 3.', 'The next was 4.']],
    ['Chapter 12. the end is near.', ['Chapter 12. the end is near.']],
    ['J. K. Rowling wrote it. She is rich.', ['J. K. Rowling wrote it.', 'She is rich.']],
    ['Wait... What happened? Nothing...', ['Wait... What happened?', 'Nothing...']],
    ['He said "stop." Then he left.', ['He said "stop."', 'Then he left.']],
    ['Line one\n\nLine two. Line three.', ['Line one\n\nLine two.', 'Line three.']],
    ['First sentence.\u00a0Second sentence.\u2009Third.', ['First sentence.', 'Second sentence.', 'Third.']],
    ['One.\u0085Two.\u001cThree.', ['One.\u0085Two.', 'Three.']],
    // Orthographic-context flags (number or initial before a word seen only lower-case sentence-initially, etc.),
    // the Python `\s+` of the period context, type_no_period and "non-" abbreviations.
    ['It was 3. recently he left.', ['It was 3. recently he left.']],
    ['It was 3. administrators left.', ['It was 3.', 'administrators left.']],
    ['I met J. R-revised here.', ['I met J.', 'R-revised here.']],
    ['gunshots U.S. ORIGINATED lufthansa.', ['gunshots U.S.', 'ORIGINATED lufthansa.']],
    ['e.g!? ', ['e.g!', '?']],
    ['result b.v. S.A. Breakdowns.', ['result b.v. S.A.', 'Breakdowns.']],
    ['Iraqi non-fla. gluts fear.', ['Iraqi non-fla. gluts fear.']],
    // A text that opens with two sentence-end characters: the first has an empty previous word.
    ['!? Yes.', ['!', '?', 'Yes.']],
    ['Mr. & Mrs. Smith went home. They slept.', ['Mr. & Mrs. Smith went home.', 'They slept.']],
    ['This is e.g. this one. And that.', ['This is e.g.', 'this one.', 'And that.']],
    ['Is it? Yes! No.', ['Is it?', 'Yes!', 'No.']],
    ['Hello world.   ', ['Hello world.']],
    ['', []],
    ['   \n  ', []],
    ['He said (quietly.)--then left. Fine.', ['He said (quietly.)', '--then left.', 'Fine.']],
    ['This is a test. this is not new.', ['This is a test.', 'this is not new.']],
    ['1. First item\n2. Second item\n3. Third item', ['1.', 'First item\n2.', 'Second item\n3.', 'Third item']],
    ['* Item one.\n* Item two.', ['* Item one.', '* Item two.']],
    ['Visit www.example.com. It is great.', ['Visit www.example.com.', 'It is great.']],
    ['Really?! Yes.', ['Really?!', 'Yes.']],
    ['Call f(x). Then g(y).', ['Call f(x).', 'Then g(y).']],
    ['“Quoted sentence.” Next one.', ['“Quoted sentence.” Next one.']],
    ['Il est arrivé. Élodie est partie.', ['Il est arrivé.', 'Élodie est partie.']],
    ['No. 5 is here. no. 6 isn\'t.', ['No.', '5 is here.', 'no.', '6 isn\'t.']],
    ['The meeting is at 5 p.m. Tomorrow we leave.', ['The meeting is at 5 p.m.', 'Tomorrow we leave.']],
    ['Section 2.3. The results follow.', ['Section 2.3.', 'The results follow.']],
    ['Prices rose 4.5%. Analysts were surprised.', ['Prices rose 4.5%.', 'Analysts were surprised.']],
  ])('%j', (text, expected) => {
    expect(punkt.tokenize(text)).toEqual(expected);
  });

  it('agrees with NLTK on all 1082 IFEval prompts and GPT-4 responses', () => {
    const mismatches: string[] = [];
    for (const row of loadGolden()) {
      const sents = punkt.tokenize(row.text);
      if (sents.length !== row.sentences || digest(sents) !== row.sentSha) {
        mismatches.push(`${row.id}: ${sents.length} sentences, NLTK ${row.sentences}`);
      }
    }
    expect(mismatches).toEqual([]);
  });
});

describe('punktWordTokenize (PunktLanguageVars.word_tokenize)', () => {
  it.each<[string, string[]]>([
    ['Hello, world.', ['Hello', ',', 'world.']],
    ['"Quoted" (paren) end--dash...', ['"', 'Quoted', '"', '(', 'paren', ')', 'end', '--', 'dash', '...']],
    ['a,b ,c', ['a,b', ',', 'c']],
  ])('%j', (line, expected) => {
    expect(punktWordTokenize(line)).toEqual(expected);
  });
});

describe('parsePunktParameters', () => {
  it('keeps lines verbatim and reads flags', () => {
    const p = parsePunktParameters({ abbrevTypes: '. . \ndr\n', collocations: 'b\tsmith\n', sentStarters: 'the\n', orthoContext: 'a\t126\n' });
    expect([...p.abbrevTypes]).toEqual(['. . ', 'dr']);
    expect(p.collocations.has('b\tsmith')).toBe(true);
    expect(p.orthoContext.get('a')).toBe(126);
  });

  it.each([
    [{ orthoContext: 'word-without-flags' }, /ortho_context.tab line 1/],
    [{ collocations: 'one-column' }, /collocations.tab line 1/],
  ])('rejects %j', (files, message) => {
    expect(() => parsePunktParameters({ abbrevTypes: '', collocations: '', sentStarters: '', orthoContext: '', ...files })).toThrow(message);
  });
});
