import { createElement, type FunctionComponent } from 'react';
import { renderToStaticMarkup } from 'react-dom/server';
import { describe, expect, it } from 'vitest';

import type { PreparedModel, StoredQualityReport } from '../../../../electron/common/ipc-contract.js';

const cardModule: string = '../../../../renderer/src/features/models/QualityCard.js';
const { QualityCard } = (await import(/* @vite-ignore */ cardModule)) as { QualityCard: FunctionComponent<{ models: readonly PreparedModel[] }> };

const base = { repo: 'o/m', revision: 'a'.repeat(40), dir: '/m', sizeBytes: 1, preparedAt: '2026-12-04T10:00:00Z', ready: true };
const quality: StoredQualityReport = {
  format: 'horizon-quality-v1', createdAt: '2026-12-04T11:00:00Z', int4Dir: 'int4-g32', backend: 'cpu', limit: 32, maxNewTokens: 128,
  prompts: 32, positions: 4000, top1Agreement: 0.9375, meanKl: 0.0123, p99Kl: 0.25, meanAbsLogitDiff: 0.05,
  promptsWithoutDivergence: 20, medianFirstDivergence: 37, perPrompt: [],
};

const text = (models: PreparedModel[]) => renderToStaticMarkup(createElement(QualityCard, { models })).replace(/<[^>]+>/g, ' ').replace(/\s+/g, ' ');

describe('QualityCard', () => {
  it('shows a stored check of an INT4 model', () => {
    const t = text([{ ...base, id: 'o--m@aaaaaaa/int4-g32', weights: 'int4', quality }, { ...base, id: 'o--m@aaaaaaa/bf16', weights: 'bf16' }]);
    expect(t).toContain('o--m@aaaaaaa/int4-g32');
    expect(t).toContain('4000 positions of 32 prompts, INT4 on CPU');
    expect(t).toContain('Top-1 agreement 93.75%');
    expect(t).toContain('Mean KL(BF16‖INT4) 1.23e-2 nats');
    expect(t).toContain('p99 KL 2.50e-1 nats');
    expect(t).toContain('20 of 32');
    expect(t).toContain('else diverges at token 37 (median)');
    expect(t).not.toContain('o--m@aaaaaaa/bf16');
  });

  it('says how to make one where none is stored, and is absent without INT4 models', () => {
    expect(text([{ ...base, id: 'x/int4-g32', weights: 'int4', quality: null }])).toContain('x/int4-g32: not checked yet. Run horizon quality --model');
    expect(renderToStaticMarkup(createElement(QualityCard, { models: [{ ...base, id: 'x/bf16', weights: 'bf16' }] }))).toBe('');
  });
});
