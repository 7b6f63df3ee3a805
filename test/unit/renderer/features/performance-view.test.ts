import { createElement, type FunctionComponent } from 'react';
import { renderToStaticMarkup } from 'react-dom/server';
import { describe, expect, it } from 'vitest';

import type { RunFigures, RunPerformancePoint } from '../../../../electron/common/ipc-contract.js';

type ViewProps = { figures: RunFigures; onCpu: boolean; residency: string; points: readonly RunPerformancePoint[]; order?: 'finished' | 'dataset' };
// Loaded by path: the Node-side type check has no JSX.
const viewModule: string = '../../../../renderer/src/features/results/PerformanceCard.js';
const { PerformanceView } = (await import(/* @vite-ignore */ viewModule)) as { PerformanceView: FunctionComponent<ViewProps> };

const text = (p: ViewProps) => renderToStaticMarkup(createElement(PerformanceView, p)).replace(/<[^>]+>/g, ' ').replace(/\s+/g, ' ');
const figures: RunFigures = {
  ttftMs: 40, decodeTokensPerSecond: 100, peakMemoryBytes: 6 * 2 ** 30, peakMemoryScope: 'process', h2dBytes: 3e9,
  expertCache: { hits: 12_000, misses: 345, evictions: 300 }, generatedTokens: 100, wallSeconds: 1,
};
// TTFT 10..50 ms and rates 80..120 tok/s: medians 30 ms and 100 tok/s, p90 46 ms.
const points: RunPerformancePoint[] = [10, 20, 30, 40, 50].map((t, i) => ({
  key: 1000 + i, finishedAt: `2026-12-04T10:00:0${i}Z`, tokens: 64, ttftMs: t, decodeTokensPerSecond: 80 + i * 10,
}));

describe('PerformanceView', () => {
  it('gives the median decode rate, TTFT quantiles and the GPU figures with their scope', () => {
    const t = text({ figures, onCpu: false, residency: '16 of 64 experts a layer on the GPU', points });
    expect(t).toContain('Decode (median) 100.0 tok/s');
    expect(t).toContain('80.0–120.0 over 5');
    expect(t).toContain('TTFT p50 / p90 30 / 46 ms');
    expect(t).toContain('Peak GPU memory 6.0 GiB this app');
    expect(t).toContain('12,000 hits · 345 misses 300 evictions · 16 of 64 experts a layer on the GPU');
    expect(renderToStaticMarkup(createElement(PerformanceView, { figures, onCpu: false, residency: '', points }))).toContain('data-testid="rate-chart"');
  });

  it('says n/a on CPU for what the CPU backend does not have, not a dash', () => {
    const t = text({ figures: { ...figures, peakMemoryBytes: null, peakMemoryScope: null, h2dBytes: null, expertCache: null }, onCpu: true, residency: 'host memory', points });
    expect(t).toContain('Peak GPU memory n/a on CPU');
    expect(t).toContain('Host → GPU copies n/a on CPU');
    expect(t).toContain('Expert cache n/a on CPU');
  });

  it("says an imported run's rates come in dataset order, its ZIP keeping no finishing times", () => {
    expect(text({ figures, onCpu: false, residency: '', points })).toContain('Decode tok/s of each response as it finished');
    const t = text({ figures, onCpu: false, residency: '', points, order: 'dataset' });
    expect(t).toContain('Decode tok/s of each response in dataset order, as its result ZIP keeps no finishing times');
    expect(renderToStaticMarkup(createElement(PerformanceView, { figures, onCpu: false, residency: '', points, order: 'dataset' }))).toContain(
      'aria-label="Decode rate of 5 responses in dataset order: median 100.0 tok/s',
    );
  });

  it('waits for two rates before drawing the line', () => {
    const t = text({ figures, onCpu: false, residency: '', points: points.slice(0, 1) });
    expect(t).toContain('The decode rate over the run shows once two responses have one.');
  });
});
