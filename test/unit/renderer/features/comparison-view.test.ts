import { createElement, type FunctionComponent } from 'react';
import { renderToStaticMarkup } from 'react-dom/server';
import { describe, expect, it } from 'vitest';

import type { RunComparison, RunDetail } from '../../../../electron/common/ipc-contract.js';

// A TSX module, which this (Node-side, JSX-less) project does not type-check: its props are typed here instead.
const viewModule: string = '../../../../renderer/src/features/history/ComparisonView.js';
const { ComparisonView } = (await import(/* @vite-ignore */ viewModule)) as { ComparisonView: FunctionComponent<{ comparison: RunComparison }> };

function detail(id: string, rows: [string, number, number][], promptStrict: number | null): RunDetail {
  return {
    id, modelRepo: 'o/m', modelRevision: '7f1c97f0123', backendLabel: 'CPU backend',
    accuracies: promptStrict === null ? null : { promptStrict, promptLoose: 0.5, instructionStrict: 0.5, instructionLoose: 0.5 },
    byInstruction: rows.map(([instructionId, strictPassed, count]) => ({ instructionId, strictPassed, count })),
    figures: { decodeTokensPerSecond: 10 },
  } as unknown as RunDetail;
}

/** The comparison's rows as [heading, A, B, delta cell class, delta]: what each row says, not how it is laid out. */
function rows(c: RunComparison): string[][] {
  const html = renderToStaticMarkup(createElement(ComparisonView, { comparison: c }));
  return [...html.matchAll(/<tr>(.*?)<\/tr>/g)]
    .map((m) => [...m[1]!.matchAll(/<t[hd](?: class="([^"]*)")?[^>]*>(.*?)<\/t[hd]>/g)].map((c) => [c[2]!.replace(/<[^>]+>/g, ''), c[1] ?? '']))
    .filter((cells) => cells.length === 4 && cells[0]![0] !== 'Metric' && cells[0]![0] !== 'Instruction')
    .map(([h, a, b, d]) => [h![0]!, a![0]!, b![0]!, d![1]!, d![0]!]);
}

describe('ComparisonView', () => {
  it('compares each metric and every instruction type either run has, marking the direction of each change', () => {
    const c = {
      a: detail('run-1', [['b:two', 1, 2], ['a:one', 3, 4], ['c:none', 0, 0]], 0.5),
      b: detail('run-2', [['a:one', 1, 4], ['d:only-b', 2, 2], ['b:two', 1, 2], ['c:none', 0, 0]], 0.6),
      changed: [], common: 4,
    } as unknown as RunComparison;
    const r = rows(c);
    expect(r.find((x) => x[0] === 'Prompt-level strict')).toEqual(['Prompt-level strict', '50.0%', '60.0%', 'delta delta--up', '+10.0 pp']);
    expect(r.find((x) => x[0] === 'Prompt-level loose')).toEqual(['Prompt-level loose', '50.0%', '50.0%', 'delta', '±0.0 pp']);
    const byType = r.filter((x) => x[0]!.includes(':'));
    expect(byType.map((x) => x[0]!.replace(/\u200b/g, ''))).toEqual(['a:one', 'b:two', 'c:none', 'd:only-b']);
    expect(byType.map((x) => x.slice(1))).toEqual([
      ['75.0%', '25.0%', 'delta delta--down', '−50.0 pp'],
      ['50.0%', '50.0%', 'delta', '±0.0 pp'],
      // No prompt of a type, or no such type in a run: nothing to rate, no change to show.
      ['—', '—', 'delta', '—'],
      ['—', '100.0%', 'delta', '—'],
    ]);
  });

  it('shows no accuracies for a run not scored yet', () => {
    const c = { a: detail('run-1', [], null), b: detail('run-2', [], 0.5), changed: [], common: 0 } as unknown as RunComparison;
    expect(rows(c).find((x) => x[0] === 'Prompt-level strict')).toEqual(['Prompt-level strict', '—', '50.0%', 'delta', '—']);
  });
});
