import { describe, expect, it } from 'vitest';

import { parseCudaDevice } from '../../../../electron/cli/cuda-device.js';

describe('parseCudaDevice', () => {
  it.each([
    ['0', 0],
    ['1', 1],
    [' 3 ', 3],
    ['63', 63],
  ])('%j', (text, expected) => {
    expect(parseCudaDevice(text)).toBe(expected);
  });

  it('gives the first device when the flag is absent', () => {
    expect(parseCudaDevice(undefined)).toBeUndefined();
  });

  it.each(['', 'gpu1', '-1', '1.5', '64', '0x1', 'cuda:0'])('rejects %j', (text) => {
    expect(() => parseCudaDevice(text)).toThrow(/--device must be a CUDA device index from 0 to 63/);
  });
});
