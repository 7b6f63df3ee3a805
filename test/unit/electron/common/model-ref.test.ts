import { describe, expect, it } from 'vitest';

import { weightsLabel } from '../../../../electron/common/model-ref.js';

describe('weightsLabel', () => {
  it.each([
    ['allenai--OLMoE-1B-7B-0924-Instruct@7f1c97f/int4-g32', 'int4', 'INT4 g32'],
    ['local:tiny/int4-g16', 'int4', 'INT4 g16'],
    ['o--m@abc/int4', 'int4', 'INT4'],
    ['o--m@abc/bf16', 'bf16', 'BF16'],
  ] as const)('%s (%s) reads %s', (id, weights, expected) => {
    expect(weightsLabel(id, weights)).toBe(expected);
  });
});
