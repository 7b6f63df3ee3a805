// Expected values come from NLTK 3.8 itself (Debian python3-nltk): word_tokenize = Punkt sentences, then
// NLTKWordTokenizer. To add a case, run nltk.word_tokenize(text) in Python and paste [text, tokens] into the table.
import { readFileSync } from 'node:fs';
import path from 'node:path';

import { beforeAll, describe, expect, it } from 'vitest';

import { parsePunktParameters } from '../../../../../evals/ifeval/text/punkt-parameters.js';
import { PunktSentenceTokenizer } from '../../../../../evals/ifeval/text/punkt-sentence-tokenizer.js';
import { treebankWordTokenize, wordTokenize } from '../../../../../evals/ifeval/text/word-tokenize.js';
import { digest, loadGolden, PUNKT_DIR } from './golden/golden.js';

let sentTokenize: (text: string) => string[];

beforeAll(() => {
  const read = (name: string): string => readFileSync(path.join(PUNKT_DIR, name), 'utf8');
  const punkt = new PunktSentenceTokenizer(
    parsePunktParameters({
      abbrevTypes: read('abbrev_types.txt'),
      collocations: read('collocations.tab'),
      sentStarters: read('sent_starters.txt'),
      orthoContext: read('ortho_context.tab'),
    }),
  );
  sentTokenize = (text) => punkt.tokenize(text);
});

describe('wordTokenize (nltk.word_tokenize, NLTK 3.8)', () => {
  it.each<[string, string[]]>([
    ['Good muffins cost $3.88 (roughly 3,36 euros)\nin New York.  Please buy me\ntwo of them.\nThanks.', ['Good', 'muffins', 'cost', '$', '3.88', '(', 'roughly', '3,36', 'euros', ')', 'in', 'New', 'York', '.', 'Please', 'buy', 'me', 'two', 'of', 'them', '.', 'Thanks', '.']],
    ['I can\'t do it, won\'t you?', ['I', 'ca', 'n\'t', 'do', 'it', ',', 'wo', 'n\'t', 'you', '?']],
    ['gonna wanna gimme lemme gotta cannot d\'ye more\'n', ['gon', 'na', 'wan', 'na', 'gim', 'me', 'lem', 'me', 'got', 'ta', 'can', 'not', 'd', '\'ye', 'more', '\'n']],
    ['\'Tis the season. \'Twas the night.', ['\'T', 'is', 'the', 'season', '.', '\'T', 'was', 'the', 'night', '.']],
    ['She said "hello" and ``left\'\'.', ['She', 'said', '``', 'hello', '\'\'', 'and', '``', 'left', '\'\'', '.']],
    ['e-mail me at john@example.com, ok?', ['e-mail', 'me', 'at', 'john', '@', 'example.com', ',', 'ok', '?']],
    ['«Bonjour», dit-il. “smart quotes” and ‘single’ ones „low“.', ['«', 'Bonjour', '»', ',', 'dit-il', '.', '“', 'smart', 'quotes', '”', 'and', '‘', 'single', '’', 'ones', '„', 'low', '“', '.']],
    ['hello...world and wait..', ['hello', '...', 'world', 'and', 'wait', '..']],
    ['A*B is 50% off! #tag @user & co; done', ['A', '*', 'B', 'is', '50', '%', 'off', '!', '#', 'tag', '@', 'user', '&', 'co', ';', 'done']],
    ['He said: \'no\' and then \'yes\'.', ['He', 'said', ':', '\'no', '\'', 'and', 'then', '\'yes', '\'', '.']],
    ['(parens) [brackets] {braces} <angle>', ['(', 'parens', ')', '[', 'brackets', ']', '{', 'braces', '}', '<', 'angle', '>']],
    ['--dash-- and a long--dash', ['--', 'dash', '--', 'and', 'a', 'long', '--', 'dash']],
    ['Mr. Smith\'s car isn\'t John\'s.', ['Mr.', 'Smith', '\'s', 'car', 'is', 'n\'t', 'John', '\'s', '.']],
    ['They\'ll go; we\'re here. I\'d say you\'ve seen it.', ['They', '\'ll', 'go', ';', 'we', '\'re', 'here', '.', 'I', '\'d', 'say', 'you', '\'ve', 'seen', 'it', '.']],
    ['1,000,000 people: many. Time 10:30, ok', ['1,000,000', 'people', ':', 'many', '.', 'Time', '10:30', ',', 'ok']],
    ['Sentence one. Sentence two? Sentence three!', ['Sentence', 'one', '.', 'Sentence', 'two', '?', 'Sentence', 'three', '!']],
    ['wanna\u00a0go and wanna\u0085go', ['wan', 'na', 'go', 'and', 'wan', 'na', 'go']],
    ['THEY\'LL CAN\'T I\'M \'S', ['THEY', '\'LL', 'CA', 'N\'T', 'I', '\'M', '\'S']],
    ['Don\'t stop... believing.', ['Do', 'n\'t', 'stop', '...', 'believing', '.']],
    ['The end of a sentence.")', ['The', 'end', 'of', 'a', 'sentence', '.', '\'\'', ')']],
    ['He asked \'why?\' and left', ['He', 'asked', '\'why', '?', '\'', 'and', 'left']],
    ['École\'s über-cool café isn\'t cheap.', ['École', '\'s', 'über-cool', 'café', 'is', 'n\'t', 'cheap', '.']],
    ['He said \'Ə\u0345 ok.', ['He', 'said', '\'', 'Ə\u0345', 'ok', '.']],
    ['\'ıt and \'ſo', ['\'ıt', 'and', '\'ſo']],
    ['CANNOT WANNA go, \'TIS \'TWAS', ['CAN', 'NOT', 'WAN', 'NA', 'go', ',', '\'T', 'IS', '\'T', 'WAS']],
  ])('%j', (text, expected) => {
    expect(wordTokenize(text, sentTokenize)).toEqual(expected);
  });

  it('agrees with NLTK on all 1082 IFEval prompts and GPT-4 responses', () => {
    const mismatches: string[] = [];
    for (const row of loadGolden()) {
      const words = wordTokenize(row.text, sentTokenize);
      if (words.length !== row.words || digest(words) !== row.wordSha) {
        mismatches.push(`${row.id}: ${words.length} tokens, NLTK ${row.words}`);
      }
    }
    expect(mismatches).toEqual([]);
  });
});

describe('treebankWordTokenize (NLTKWordTokenizer.tokenize on one sentence)', () => {
  it.each<[string, string[]]>([
    ['"Hi," she said.', ['``', 'Hi', ',', "''", 'she', 'said', '.']],
    ['It costs $5... or so', ['It', 'costs', '$', '5', '...', 'or', 'so']],
    ['Two sentences. Not split here.', ['Two', 'sentences.', 'Not', 'split', 'here', '.']],
  ])('%j', (sentence, expected) => {
    expect(treebankWordTokenize(sentence)).toEqual(expected);
  });
});
