import { describe, expect, it } from 'vitest';

import type { ZipSubject } from '../../../../electron/common/ipc-contract.js';
import { describeZipSubject } from '../../../../electron/common/zip-subject.js';

const full: ZipSubject = {
  id: '20261206T205311-c5b042', label: 'baseline g32', modelRepo: 'allenai/OLMoE-1B-7B-0924-Instruct',
  modelRevision: '7f1c97f440f06ce36705e4f2b843edb5925f4498', modelId: 'allenai--OLMoE-1B-7B-0924-Instruct@7f1c97f/int4-g32',
  weights: 'int4', backendLabel: 'CUDA: NVIDIA H200', createdAt: '2026-12-06T20:53:11.000Z',
};
const none: ZipSubject = { id: null, label: null, modelRepo: null, modelRevision: null, modelId: null, weights: null, backendLabel: null, createdAt: null };
const day = (iso: string) => iso.slice(0, 10);

describe('describeZipSubject', () => {
  it.each<[string, 'result' | 'campaign', ZipSubject, string]>([
    [
      'every field, a commit shortened',
      'result', full,
      'run 20261206T205311-c5b042 "baseline g32": allenai/OLMoE-1B-7B-0924-Instruct @ 7f1c97f, INT4 g32, CUDA: NVIDIA H200, started 2026-12-06',
    ],
    ['a campaign', 'campaign', { ...full, id: 'perf-1', label: null, weights: 'bf16' }, 'campaign perf-1: allenai/OLMoE-1B-7B-0924-Instruct @ 7f1c97f, BF16, CUDA: NVIDIA H200, started 2026-12-06'],
    ['a branch kept whole', 'result', { ...none, id: 'r', modelRepo: 'o/m', modelRevision: 'main' }, 'run r: o/m @ main'],
    ['a repo without its revision', 'result', { ...none, id: 'r', modelRepo: 'o/m' }, 'run r: o/m'],
    ['a label with quotes, JSON-quoted', 'result', { ...none, id: 'r', label: 'say "hi"' }, 'run r "say \\"hi\\""'],
    ['INT4 without a model id', 'result', { ...none, id: 'r', weights: 'int4' }, 'run r: INT4'],
    ['nothing said', 'result', none, 'run (no id given)'],
  ])('%s', (_name, kind, subject, expected) => {
    expect(describeZipSubject(kind, subject, day)).toBe(expected);
  });
});
