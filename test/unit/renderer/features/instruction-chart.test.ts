import { createElement, type FunctionComponent } from 'react';
import { renderToStaticMarkup } from 'react-dom/server';
import { describe, expect, it } from 'vitest';

import type { InstructionTypeRow } from '../../../../electron/common/ipc-contract.js';

// A TSX module, which this (Node-side, JSX-less) project does not type-check: its props are typed here instead.
const chartModule: string = '../../../../renderer/src/features/results/InstructionChart.js';
const { InstructionChart } = (await import(/* @vite-ignore */ chartModule)) as {
  InstructionChart: FunctionComponent<{ rows: readonly InstructionTypeRow[]; onPick?(id: string): void }>;
};

const row = (instructionId: string, strictPassed: number, loosePassed: number, count: number): InstructionTypeRow => ({ instructionId, strictPassed, loosePassed, count });

describe('InstructionChart', () => {
  it("draws each type's strict and loose 95% intervals over its bars and says them", () => {
    // Wilson intervals worked by hand: 5 of 10 -> 23.66-76.34%; 0 of 10 -> 0-27.75%; 1 of 1 -> 20.65-100%.
    const html = renderToStaticMarkup(
      createElement(InstructionChart, { rows: [row('a:half', 5, 6, 10), row('b:none', 0, 0, 10), row('c:one', 1, 1, 1)], onPick: () => undefined }),
    );
    const whiskers = [...html.matchAll(/class="chart__ci" style="left:([\d.]+)%;width:([\d.]+)%"/g)].map((m) => [Number(m[1]), Number(m[2])]);
    expect(whiskers).toEqual([[23.66, 52.68], [0, 27.75], [20.65, 79.35]]);
    // The loose ones along the top: 6 of 10 -> 31.27-83.18%.
    const loose = [...html.matchAll(/class="chart__ci chart__ci--loose" style="left:([\d.]+)%;width:([\d.]+)%"/g)].map((m) => [Number(m[1]), Number(m[2])]);
    expect(loose).toEqual([[31.27, 51.91], [0, 27.75], [20.65, 79.35]]);
    expect(html).toContain('aria-label="Show the responses with a:half (strict 5 of 10 (95% interval 24–76%), loose 6 of 10 (95% interval 31–83%))"');
    expect(html).toContain('<span class="sr-only">strict 0 of 10 (95% interval 0–28%), loose 0 of 10 (95% interval 0–28%)</span>');
  });

  it('draws no interval for a type with no occurrence', () => {
    const html = renderToStaticMarkup(createElement(InstructionChart, { rows: [row('a:empty', 0, 0, 0)] }));
    expect(html).not.toContain('chart__ci"');
    expect(html).toContain('strict 0 of 0, loose 0 of 0');
  });
});
