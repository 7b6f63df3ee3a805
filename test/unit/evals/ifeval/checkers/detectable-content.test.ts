// Rows from instructions_test.py (number_placeholders, postscript_checker). To add a case: append a row.
import { describe, expect, it } from 'vitest';

import { check } from './check-helper.js';

describe('detectable_content:number_placeholders', () => {
  it.each([
    [
      'Sure, here is a short template with 5 placeholders:\n[Name]\n[Email]\n[Phone]\n[Address]\n[Website]\nThis template can be used for a variety of purposes, such ascreating a contact list, sending out surveys, or creating a sign-up form.',
      5,
      true,
    ],
    ['My [adjective] [noun] is [adjective] [noun]. I [verb] and [verb].', 7, false],
    ['[a\nb] [c]', 2, false],
    // `\[.*?\]` is lazy: two placeholders on one line count twice.
    ['Dear [name], see you at [place].', 2, true],
  ])('%#', (response, num_placeholders, expected) => {
    expect(check('detectable_content:number_placeholders', { num_placeholders }, response)).toBe(expected);
  });
});

describe('detectable_content:postscript', () => {
  const m1 =
    '\n  I will do my best to follow your instructions and always start my responses\n  with "My response is:". I will try to be as consistent as possible, but\n  please be patient with me if I make a mistake. I am still under development,\n  and I am always learning new things.\n\n  P.S. I hope this is what you were looking for.';
  const m2 =
    '\n  Sure, here is my response with a postscript starting with P.P.S.:\n\n  My response is: I hope this answers your question.\n\n  P.P.S. I am always happy to answer any other questions you may have.\n\n  Do you have any other questions for me?';
  const m3 =
    '\n  The radius of a unit circle is 1. However, I can give you a funny and wrong\n  answer: the radius of a unit circle is 0. This is because a unit circle is a\n  circle with a radius of 1, and if the radius is 0, then the circle has no\n  size and is just a point. (not starting a new line) P.S. I hope you enjoyed\n  my joke!';
  const m4 = '\n  If the length of a square is one, the area of the square will also be one.\n  p.p.s what if the entire response was lower case letters?\n  ';
  const m5 = '\n  The mysteries of space and time are mysterious.\n  P. S. Sometimes there are even spaces between P. and S..\n  ';
  it.each([
    [m1, 'P.S.', true],
    [m1, 'PS:', false],
    [m2, 'P.P.S', true],
    [m3, 'P.S.', true],
    [m4, 'P.P.S', true],
    [m5, 'P.S.', true],
    ['no postscript here', 'P.S.', false],
    // The marker may open the response, end its line, and have at most one space after each dot.
    ['P.P.S. Call me.', 'P.P.S', true],
    ['Bye.\nP.P.S', 'P.P.S', true],
    ['P. P. S. Call me.', 'P.P.S', true],
    ['P.  P. S. Call me.', 'P.P.S', false],
    ['P. P.  S. Call me.', 'P.P.S', false],
    ['P.S. Call me.', 'P.S.', true],
    ['Bye.\nP.S.', 'P.S.', true],
    ['P.  S. Call me.', 'P.S.', false],
    ['Note: call me.', 'Note:', true],
    ['Bye.\nnote:', 'Note:', true],
  ])('%#: marker %j -> %s', (response, postscript_marker, expected) => {
    expect(check('detectable_content:postscript', { postscript_marker }, response)).toBe(expected);
  });
});
