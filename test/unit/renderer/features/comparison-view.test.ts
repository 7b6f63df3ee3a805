import { createElement, type FunctionComponent } from 'react';
import { renderToStaticMarkup } from 'react-dom/server';
import { describe, expect, it } from 'vitest';

import type { PairedComparison, ResponseDetail, RunComparison, RunDetail } from '../../../../electron/common/ipc-contract.js';
import { pairedByInstructionType, pairedLevel } from '../../../../electron/common/paired-stats.js';
import type { PairedInstructionType } from '../../../../electron/common/paired-stats.js';

// A TSX module, which this (Node-side, JSX-less) project does not type-check: its props are typed here instead.
const viewModule: string = '../../../../renderer/src/features/history/ComparisonView.js';
const { ComparisonView, ResponsePair } = (await import(/* @vite-ignore */ viewModule)) as {
  ComparisonView: FunctionComponent<{ comparison: RunComparison }>;
  ResponsePair: FunctionComponent<{ a: ResponseDetail; b: ResponseDetail }>;
};

function detail(id: string, rows: [string, number, number][], promptStrict: number | null): RunDetail {
  return {
    id, label: null, modelRepo: 'o/m', modelRevision: '7f1c97f0123', backendLabel: 'CPU backend',
    accuracies: promptStrict === null ? null : { promptStrict, promptLoose: 0.5, instructionStrict: 0.5, instructionLoose: 0.5 },
    byInstruction: rows.map(([instructionId, strictPassed, count]) => ({ instructionId, strictPassed, count })),
    figures: { decodeTokensPerSecond: 10 },
    done: 40,
    endings: { stop: 30, length: 10, cancelled: 0 },
    policy: { maxNewTokens: 1280 },
  } as unknown as RunDetail;
}

/** A level of `n` prompts with these paired counts, through the real statistics. */
function level(bothPass: number, regressions: number, improvements: number, bothFail: number) {
  const spec: [boolean, boolean, number][] = [
    ...Array.from({ length: bothPass }, () => [true, true] as [boolean, boolean]),
    ...Array.from({ length: regressions }, () => [true, false] as [boolean, boolean]),
    ...Array.from({ length: improvements }, () => [false, true] as [boolean, boolean]),
    ...Array.from({ length: bothFail }, () => [false, false] as [boolean, boolean]),
  ].map(([a, b], i) => [a, b, i]);
  return pairedLevel(spec.map(([a, b, cluster]) => ({ a, b, cluster })), 200);
}

function stats(common: number, promptStrict = level(0, 0, 0, 0), byInstructionType: PairedInstructionType[] = []): PairedComparison {
  const even = level(Math.ceil(common / 2), 0, 0, Math.floor(common / 2));
  return {
    common, promptStrict, promptLoose: even, instructionStrict: even, instructionLoose: even, identicalResponses: 1, instructionMismatches: 0,
    byInstructionType,
  };
}

/** The comparison's rows as [heading, A, B, delta cell class, delta]: what each row says, not how it is laid out. */
function rows(c: RunComparison): string[][] {
  const html = renderToStaticMarkup(createElement(ComparisonView, { comparison: c }));
  return [...html.matchAll(/<tr>(.*?)<\/tr>/g)]
    .map((m) => [...m[1]!.matchAll(/<t[hd](?: class="([^"]*)")?[^>]*>(.*?)<\/t[hd]>/g)].map((c) => [c[2]!.replace(/<[^>]+>/g, ''), c[1] ?? '']))
    .filter((cells) => cells.length === 4 && cells[0]![0] !== 'Metric' && cells[0]![0] !== 'Instruction')
    .map(([h, a, b, d]) => [h![0]!, a![0]!, b![0]!, d![1]!, d![0]!]);
}

/** The paired by-type table's rows as [type, n, A, B, delta cell class, delta, A pass B fail, A fail B pass]. */
function typeRows(c: RunComparison): string[][] {
  const html = renderToStaticMarkup(createElement(ComparisonView, { comparison: c }));
  const table = /data-testid="paired-types">(.*?)<\/table>/.exec(html)![1]!;
  return [...table.matchAll(/<tr>(.*?)<\/tr>/g)]
    .map((m) => [...m[1]!.matchAll(/<t[hd](?: class="([^"]*)")?[^>]*>(.*?)<\/t[hd]>/g)].map((c) => [c[2]!.replace(/<[^>]+>/g, ''), c[1] ?? '']))
    .filter((cells) => cells[0]![0] !== 'Instruction')
    .map(([t, n, a, b, d, reg, imp]) => [t![0]!.replace(/\u200b/g, ''), n![0]!, a![0]!, b![0]!, d![1]!, d![0]!, reg![0]!, imp![0]!]);
}

const T = { strict: true, loose: true };
const F = { strict: false, loose: false };
const L = { strict: false, loose: true };

describe('ComparisonView', () => {
  it('compares each metric, marking the direction of each change', () => {
    const c = { a: detail('run-1', [], 0.5), b: detail('run-2', [], 0.6), changed: [], common: 10, stats: stats(10, level(4, 1, 2, 3)) } as unknown as RunComparison;
    const r = rows(c);
    expect(r.find((x) => x[0] === 'Prompt-level strict')).toEqual(['Prompt-level strict', '50.0%', '60.0%', 'delta delta--up', '+10.0 pp']);
    expect(r.find((x) => x[0] === 'Prompt-level loose')).toEqual(['Prompt-level loose', '50.0%', '50.0%', 'delta', '±0.0 pp']);
  });

  it('says how many responses of each run its max new tokens cut', () => {
    const b = { ...detail('run-2', [], 0.6), done: 541, endings: { stop: 539, length: 2, cancelled: 0 }, policy: { maxNewTokens: 2048 } } as unknown as RunDetail;
    const c = { a: detail('run-1', [], 0.5), b, changed: [], common: 40, stats: stats(40) } as unknown as RunComparison;
    const html = renderToStaticMarkup(createElement(ComparisonView, { comparison: c }));
    const cells = [.../<tr data-testid="comparison-cut">(.*?)<\/tr>/.exec(html)![1]!.matchAll(/<t[hd][^>]*>(.*?)<\/t[hd]>/g)].map((m) => m[1]);
    expect(cells).toEqual(['Cut at max new tokens (whole run)', '10 of 40 at 1,280', '2 of 541 at 2,048', '']);
  });

  it('compares each instruction type over the common prompts only, not over each run\'s own', () => {
    // Each run's own tallies disagree with the common prompts' (B scored more prompts); the table must not use them.
    const a = detail('run-1', [['a:one', 4, 4], ['b:two', 0, 2]], 0.5);
    const b = detail('run-2', [['a:one', 1, 9], ['b:two', 2, 2], ['d:only-b', 2, 2]], 0.6);
    const byType = pairedByInstructionType([
      { instructionId: 'b:two', a: F, b: T },
      { instructionId: 'a:one', a: T, b: L },
      { instructionId: 'a:one', a: T, b: T },
      { instructionId: 'a:one', a: T, b: F },
      { instructionId: 'a:one', a: L, b: T },
    ]);
    const c = { a, b, changed: [], common: 3, stats: stats(3, level(1, 1, 1, 0), byType) } as unknown as RunComparison;
    expect(typeRows(c)).toEqual([
      ['a:one', '4', '75.0%', '50.0%', 'delta delta--down', '−25.0 pp', '2', '1'],
      ['b:two', '1', '0.0%', '100.0%', 'delta delta--up', '+100.0 pp', '0', '1'],
    ]);
    const text = renderToStaticMarkup(createElement(ComparisonView, { comparison: c })).replace(/<[^>]+>/g, ' ');
    expect(text).not.toContain('only-b');
    expect(text).toContain('Instruction-level strict by type, over the 3 common prompts');
  });

  it('shows no accuracies when no prompt was scored in both runs', () => {
    const c = { a: detail('run-1', [], null), b: detail('run-2', [], 0.5), changed: [], common: 0, stats: stats(0) } as unknown as RunComparison;
    expect(rows(c).find((x) => x[0] === 'Prompt-level strict')).toEqual(['Prompt-level strict', '—', '—', 'delta', '—']);
    expect(renderToStaticMarkup(createElement(ComparisonView, { comparison: c }))).toContain('no prompt was scored in both runs');
  });

  it('says the figures are over the common prompts, reads the test in plain words and lists the paired counts', () => {
    const a = { ...detail('run-1', [], 0.5), done: 40, label: 'baseline <g32>' } as RunDetail;
    const b = { ...detail('run-2', [], 0.6), done: 541 } as RunDetail;
    const c = {
      a, b, common: 40, stats: stats(40, level(20, 12, 4, 4)),
      changed: [
        { key: 7, promptPreview: 'first regression', a: { strict: true, loose: true }, b: { strict: false, loose: false } },
        { key: 9, promptPreview: 'an improvement', a: { strict: false, loose: false }, b: { strict: true, loose: true } },
      ],
    } as unknown as RunComparison;
    const html = renderToStaticMarkup(createElement(ComparisonView, { comparison: c }));
    const text = html.replace(/<[^>]+>/g, ' ').replace(/\s+/g, ' ');
    expect(text).toContain('40 prompts scored in both runs; every figure below is over these only (A scored 40, B 541)');
    // 12 regressions against 4 improvements: exact two-sided binomial p = 0.0768, not significant at 0.05.
    expect(text).toContain('Prompt-level strict: no significant difference (B regresses 12 prompts, improves 4, p = 0.08).');
    const paired = [...html.matchAll(/<tr><th scope="row">Prompt-level strict<\/th>(.*?)<\/tr>/g)].map((m) => m[1]!.replace(/<[^>]+>/g, '|'));
    expect(paired.some((r) => r.includes('|20||12||4||4||0.077|'))).toBe(true);
    expect(text).toMatch(/#7 Open regression first regression.*#9 Open improvement an improvement/);
    expect(text).toContain('Export comparison (JSON)');
    // A's label under its id (escaped as text); B has none.
    expect(html.match(/<div class="compare__label">[^<]*<\/div>/g)).toEqual(['<div class="compare__label">baseline &lt;g32&gt;</div>']);
  });

  describe('a changed prompt\'s two responses', () => {
    const response = (runId: string, text: string, strictPass: boolean) =>
      ({ runId, key: 7, prompt: 'Say it in <b>three</b> words.', response: text, strictPass, loosePass: strictPass, verdicts: [] }) as unknown as ResponseDetail;
    /** [the divergence sentence, each side's text as [shared part, marked part]] (tags stripped, entities left). */
    const pair = (a: string, b: string) => {
      const html = renderToStaticMarkup(createElement(ResponsePair, { a: response('run-1', a, true), b: response('run-2', b, false) }));
      const sides = [...html.matchAll(/<pre class="pair__text">(.*?)<\/pre>/g)].map((m) => {
        const same = /<span class="pair__same">(.*?)<\/span>/.exec(m[1]!)?.[1] ?? null;
        const differs = /<mark class="pair__differs">(.*?)<\/mark>/.exec(m[1]!)?.[1]?.replace(/<span class="sr-only">[^<]*<\/span>/, '') ?? null;
        return same === null ? [m[1]!] : [same, differs];
      });
      return [/data-testid="pair-divergence">(.*?)<\/p>/.exec(html)![1]!, ...sides];
    };

    it('mutes what both share and marks where each goes its own way, from the word they part in', () => {
      expect(pair('Red green blue.', 'Red green yellow and more.')).toEqual([
        'The responses share their first 2 words; what differs is highlighted.',
        ['Red green ', 'blue.'],
        ['Red green ', 'yellow and more.'],
      ]);
    });

    it('says when they differ from the first word, when one is all the other has, and when they are the same', () => {
      expect(pair('Yes.', 'No.')[0]).toBe('The responses differ from their first word.');
      expect(pair('One two', 'One two three')).toEqual([
        'The responses share their first word; what differs is highlighted.',
        ['One ', 'two'],
        ['One ', 'two three'],
      ]);
      expect(pair('Same words.', 'Same words.')).toEqual(['The two responses are the same text.', ['Same words.'], ['Same words.']]);
      // The prompt is text, not markup.
      expect(renderToStaticMarkup(createElement(ResponsePair, { a: response('a', 'x', true), b: response('b', 'y', false) }))).toContain('Say it in &lt;b&gt;three&lt;/b&gt; words.');
    });
  });
});
