import { useRef, useState, type KeyboardEvent } from 'react';

import { passRateInterval } from '../../../../electron/common/accuracy-intervals.js';
import type { InstructionTypeRow } from '../../../../electron/common/ipc-contract.js';
import { BreakableId } from '../../components/BreakableId.js';

interface Props {
  rows: readonly InstructionTypeRow[];
  /** Called with an instruction id when its row is activated (filters the browser). */
  onPick?(instructionId: string): void;
}

function percent(passed: number, count: number): number {
  return count ? (passed / count) * 100 : 0;
}

/** An accuracy's 95% Wilson interval in percent, for a whisker over the bars: a small n says little. */
function interval(passed: number, count: number): readonly [number, number] | null {
  const ci = passRateInterval(passed, count);
  return ci && [100 * ci[0], 100 * ci[1]];
}

/** The row's counts in words, for screen readers and the row's button. */
function rowWords(r: InstructionTypeRow): string {
  const words = (passed: number) => {
    const ci = interval(passed, r.count);
    return `${passed} of ${r.count}${ci ? ` (95% interval ${ci[0].toFixed(0)}–${ci[1].toFixed(0)}%)` : ''}`;
  };
  return `strict ${words(r.strictPassed)}, loose ${words(r.loosePassed)}`;
}

const whisker = (ci: readonly [number, number]) => ({ left: `${ci[0].toFixed(2)}%`, width: `${(ci[1] - ci[0]).toFixed(2)}%` });

function RowContent({ row: r }: { row: InstructionTypeRow }) {
  const strict = percent(r.strictPassed, r.count);
  const loose = percent(r.loosePassed, r.count);
  const ci = interval(r.strictPassed, r.count);
  const looseCi = interval(r.loosePassed, r.count);
  return (
    <>
      <span className="chart__label">
        <BreakableId id={r.instructionId} />
      </span>
      <span className="chart__track" aria-hidden="true">
        <span className="chart__bar chart__bar--loose" style={{ width: `${loose}%` }} />
        <span className="chart__bar chart__bar--strict" style={{ width: `${strict}%` }} />
        {ci ? <span className="chart__ci" style={whisker(ci)} /> : null}
        {looseCi ? <span className="chart__ci chart__ci--loose" style={whisker(looseCi)} /> : null}
      </span>
      <span className="chart__value">
        <span className="sr-only">{rowWords(r)}</span>
        <span aria-hidden="true">
          {`${Math.round(strict)}% / ${Math.round(loose)}%`}
          <span className="chart__count">{` n=${r.count}`}</span>
        </span>
      </span>
    </>
  );
}

const MOVES: Readonly<Record<string, (i: number, last: number) => number>> = {
  ArrowDown: (i, last) => Math.min(i + 1, last),
  ArrowUp: (i) => Math.max(i - 1, 0),
  Home: () => 0,
  End: (_i, last) => last,
};

/**
 * Strict and loose accuracy per instruction type as horizontal bars. HTML rather than a scaled SVG, so that the text
 * keeps its size in a narrow window and each row can be a real button. With `onPick` the rows are a vertical toolbar:
 * one Tab stop, the arrow keys (and Home, End) move between the rows.
 */
export function InstructionChart({ rows, onPick }: Props) {
  // The row that holds the Tab stop, by id: rows of a run still generating come and go as it scores more.
  const [current, setCurrent] = useState<string | null>(null);
  const buttons = useRef(new Map<string, HTMLButtonElement>());
  const tabStop = rows.some((r) => r.instructionId === current) ? current : (rows[0]?.instructionId ?? null);

  const onKeyDown = (e: KeyboardEvent<HTMLDivElement>) => {
    const move = MOVES[e.key];
    if (!move || e.altKey || e.ctrlKey || e.metaKey || e.shiftKey) return;
    e.preventDefault();
    const next = rows[move(Math.max(0, rows.findIndex((r) => r.instructionId === tabStop)), rows.length - 1)];
    if (!next) return;
    setCurrent(next.instructionId);
    buttons.current.get(next.instructionId)?.focus();
  };

  const list = (
    <ul className="chart__rows" data-testid="instruction-chart">
      {rows.map((r) => (
        <li key={r.instructionId}>
          {onPick ? (
            <button
              type="button"
              className="chart__row chart__row--link"
              aria-label={`Show the responses with ${r.instructionId} (${rowWords(r)})`}
              tabIndex={r.instructionId === tabStop ? 0 : -1}
              ref={(el) => {
                if (el) buttons.current.set(r.instructionId, el);
                else buttons.current.delete(r.instructionId);
              }}
              onFocus={() => setCurrent(r.instructionId)}
              onClick={() => onPick(r.instructionId)}
            >
              <RowContent row={r} />
            </button>
          ) : (
            <div className="chart__row">
              <RowContent row={r} />
            </div>
          )}
        </li>
      ))}
    </ul>
  );

  return (
    <figure className="chart">
      <figcaption className="chart__legend">
        <span className="sr-only">Accuracy per instruction type, strict and loose, each with its 95% interval. </span>
        <span aria-hidden="true">
          <span className="chart__key chart__key--loose" /> loose <span className="chart__key chart__key--strict" /> strict{' '}
          <span className="chart__key chart__key--ci" /> strict, 95% interval <span className="chart__key chart__key--ci chart__key--ci-loose" /> loose,
          95% interval
        </span>
      </figcaption>
      {onPick ? (
        <div role="toolbar" aria-orientation="vertical" aria-label="Show the responses of an instruction type" onKeyDown={onKeyDown}>
          {list}
        </div>
      ) : (
        list
      )}
    </figure>
  );
}
