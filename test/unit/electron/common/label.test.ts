import { describe, expect, it } from 'vitest';

import { normalizeLabel, LABEL_MAX, labelRefusal } from '../../../../electron/common/label.js';

describe('run labels', () => {
  it.each([
    ['  baseline g32 ', 'baseline g32'],
    ['BF16 reference', 'BF16 reference'],
    ['', null],
    ['   ', null],
    ['\tg128\n', 'g128'],
  ])('normalizes %j to %j', (text, label) => {
    expect(normalizeLabel(text)).toBe(label);
  });

  it.each([
    ['baseline g32', null],
    ['x'.repeat(LABEL_MAX), null],
    ['ünïcode · 日本語 ✓', null],
    ['x'.repeat(LABEL_MAX + 1), `A label has at most ${LABEL_MAX} characters (this one has ${LABEL_MAX + 1}).`],
    ['two\nlines', 'A label is one line of text, without control characters.'],
    ['tab\there', 'A label is one line of text, without control characters.'],
    ['escape \u001b[31m', 'A label is one line of text, without control characters.'],
    [' padded', 'A label does not start or end with spaces.'],
    ['', 'A label is not empty (an empty one is no label).'],
  ])('%j: %j', (label, problem) => {
    expect(labelRefusal(label)).toBe(problem);
  });
});
