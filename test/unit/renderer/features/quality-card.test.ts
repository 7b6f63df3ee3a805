import { createElement, type FunctionComponent } from 'react';
import { renderToStaticMarkup } from 'react-dom/server';
import { describe, expect, it } from 'vitest';

import type { PreparedModel, StoredQualityReport } from '../../../../electron/common/ipc-contract.js';

const cardModule: string = '../../../../renderer/src/features/models/QualityCard.js';
type ViewProps = { models: readonly PreparedModel[]; job: unknown; onCheck: (id: string) => void; onCancel: () => void };
const { QualityCardView } = (await import(/* @vite-ignore */ cardModule)) as { QualityCardView: FunctionComponent<ViewProps> };
let job: unknown = null;
const QualityCard = ({ models }: { models: readonly PreparedModel[] }) => createElement(QualityCardView, { models, job, onCheck: () => {}, onCancel: () => {} });

const base = { repo: 'o/m', revision: 'a'.repeat(40), dir: '/m', sizeBytes: 1, preparedAt: '2026-12-04T10:00:00Z', ready: true };
const quality: StoredQualityReport = {
  format: 'horizon-quality-v1', createdAt: '2026-12-04T11:00:00Z', int4Dir: 'int4-g32', backend: 'cpu', limit: 32, maxNewTokens: 128,
  prompts: 32, positions: 4000, top1Agreement: 0.9375, meanKl: 0.0123, p99Kl: 0.25, meanAbsLogitDiff: 0.05,
  promptsWithoutDivergence: 20, medianFirstDivergence: 37,
  q4_0: { activations: 'q8_0', top1Agreement: 0.90625, meanKl: 0.0246, p99Kl: 0.5, meanAbsLogitDiff: 0.0625, meanKlRatioCi95: [0.45, 0.56], promptsInt4Closer: 27, promptsQ4_0Closer: 5, signTestP: 0.00011 }, perPrompt: [],
};

const text = (models: PreparedModel[]) => renderToStaticMarkup(createElement(QualityCard, { models })).replace(/<[^>]+>/g, ' ').replace(/&#x27;/g, "'").replace(/\s+/g, ' ');

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

  it("puts llama.cpp's Q4_0 on the same tokens beside INT4, with the ratio of their mean KL", () => {
    const t = text([{ ...base, id: 'x/int4-g32', weights: 'int4', quality }]);
    expect(t).toContain('INT4, this pack 93.75% 1.23e-2 2.50e-1 5.00e-2');
    expect(t).toContain("llama.cpp's Q4_0, the same experts 90.63% 2.46e-2 5.00e-1 6.25e-2");
    expect(t).toContain("INT4's mean KL is 0.50x Q4_0's (95% interval 0.45–0.56x, prompts resampled): closer to BF16 than llama.cpp's Q4_0 on the same tokens.");
    expect(t).toContain('INT4 is closer to BF16 on 27 prompts, Q4_0 on 5 (sign test p = 0.00011).');
    const reading = (meanKl: number, meanKlRatioCi95: [number, number] | null) =>
      text([{ ...base, id: 'x/int4-g32', weights: 'int4', quality: { ...quality, q4_0: { ...quality.q4_0!, meanKl, meanKlRatioCi95 } } }]);
    expect(reading(0.01, [1.1, 1.4])).toContain("INT4's mean KL is 1.23x Q4_0's (95% interval 1.10–1.40x, prompts resampled): further from BF16");
    // An interval that spans 1x says no more than that.
    expect(reading(0.0123, [0.8, 1.2])).toContain("INT4's mean KL is 1.00x Q4_0's (95% interval 0.80–1.20x, prompts resampled): no clear difference from llama.cpp's Q4_0 on these prompts (the interval spans 1x).");
    // No positions at all (every response empty): nothing to compare, not an exact match.
    const empty = { ...quality, positions: 0, meanKl: 0, q4_0: { ...quality.q4_0!, meanKl: 0, meanKlRatioCi95: null } };
    const emptyText = text([{ ...base, id: 'x/int4-g32', weights: 'int4', quality: { ...empty, q4_0: { ...empty.q4_0, promptsInt4Closer: 0, promptsQ4_0Closer: 0, signTestP: 1 } } }]);
    expect(emptyText).toContain("No prompt had a response to compare over. Q4_0 ran as llama.cpp runs it, its experts' inputs rounded to 8 bits (Q8_0)");
    // A check from before the inputs were rounded says so.
    const floatInputs = text([{ ...base, id: 'x/int4-g32', weights: 'int4', quality: { ...quality, q4_0: { ...quality.q4_0!, activations: 'float' } } }]);
    expect(floatInputs).toContain('This check gave Q4_0 float inputs, which favour it; checking again rounds them to 8 bits as llama.cpp does.');
    expect(floatInputs).not.toContain('Q4_0 ran as llama.cpp runs it');
    expect(reading(0.0123, null).includes('Q4_0 matches BF16 exactly')).toBe(false);
    // Without an interval (a single prompt), the ratio alone.
    expect(reading(0.01, null)).toContain("INT4's mean KL is 1.23x Q4_0's: further from BF16");
    const older = text([{ ...base, id: 'x/int4-g32', weights: 'int4', quality: { ...quality, q4_0: null } }]);
    expect(older).toContain('This check has no Q4_0 point of comparison');
    expect(older).not.toContain("llama.cpp's Q4_0, the same experts");
  });

  it('offers the check where none is stored, again where one is, and is absent without INT4 models', () => {
    job = null;
    const t = text([{ ...base, id: 'x/int4-g32', weights: 'int4', quality: null }]);
    expect(t).toContain('x/int4-g32: not checked yet.');
    expect(t).toContain('horizon quality --model');
    expect(t).toContain('Check quality');
    expect(text([{ ...base, id: 'x/int4-g32', weights: 'int4', quality }])).toContain('Check again');
    expect(renderToStaticMarkup(createElement(QualityCard, { models: [{ ...base, id: 'x/bf16', weights: 'bf16' }] }))).toBe('');
  });

  it('shows a running check with its progress and ETA and a Cancel button, and a failure as an alert', () => {
    const step = { jobId: 'q1', step: 'quality', status: 'running', doneBytes: 3, totalBytes: 32, bytesPerSecond: 0, etaSeconds: 90, message: 'quality check: 3 of 32 prompts' } as const;
    const running = { jobId: 'q1', checking: 'x/int4-g32', request: { repo: '', revision: '' }, steps: { quality: step }, status: 'running', error: null, modelId: null } as const;
    job = running;
    const models: PreparedModel[] = [{ ...base, id: 'x/int4-g32', weights: 'int4', quality: null }, { ...base, id: 'y/int4-g32', weights: 'int4', quality: null }];
    const t = text(models);
    expect(t).toContain('quality check: 3 of 32 prompts, about 90 s left');
    expect(t).toContain('Cancel');
    // Another model's button waits while one check runs.
    expect(renderToStaticMarkup(createElement(QualityCard, { models }))).toMatch(/<button type="button" class="btn btn--small" disabled="">Check quality<\/button>/);
    job = { ...running, status: 'failed', error: 'quality check of /m failed (exit 1): no prompts' };
    expect(renderToStaticMarkup(createElement(QualityCard, { models }))).toContain('<p role="alert">quality check of /m failed (exit 1): no prompts</p>');
    job = null;
  });
});
