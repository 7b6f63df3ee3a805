import type { KeyboardEvent } from 'react';

import type { InstructionTypeRow } from '../../../../electron/common/ipc-contract.js';

interface Props {
  rows: readonly InstructionTypeRow[];
  /** Called with an instruction id when its row is activated (filters the browser). */
  onPick?(instructionId: string): void;
}

const ROW_H = 26;
const LABEL_W = 350;
const BAR_W = 380;
const VALUE_W = 150;
const TOP = 28;

/** Strict and loose accuracy per instruction type as horizontal bars (plain SVG). */
export function InstructionChart({ rows, onPick }: Props) {
  const height = TOP + rows.length * ROW_H + 8;
  const width = LABEL_W + BAR_W + VALUE_W;
  return (
    <figure className="chart">
      <svg
        viewBox={`0 0 ${width} ${height}`}
        width="100%"
        role="img"
        aria-label="Accuracy per instruction type, strict and loose"
        data-testid="instruction-chart"
      >
        <g className="chart__legend" transform={`translate(${LABEL_W}, 10)`}>
          <rect width="10" height="10" className="chart__bar chart__bar--loose" y="-1" />
          <text x="16" y="8">
            loose
          </text>
          <rect x="70" width="10" height="10" className="chart__bar chart__bar--strict" y="-1" />
          <text x="86" y="8">
            strict
          </text>
        </g>
        {[0, 0.25, 0.5, 0.75, 1].map((t) => (
          <g key={t}>
            <line
              className="chart__grid"
              x1={LABEL_W + t * BAR_W}
              x2={LABEL_W + t * BAR_W}
              y1={TOP - 4}
              y2={height - 6}
            />
          </g>
        ))}
        {rows.map((r, i) => {
          const strict = r.count ? r.strictPassed / r.count : 0;
          const loose = r.count ? r.loosePassed / r.count : 0;
          const y = TOP + i * ROW_H;
          return (
            <g
              key={r.instructionId}
              className={onPick ? 'chart__row chart__row--link' : 'chart__row'}
              transform={`translate(0, ${y})`}
              {...(onPick
                ? {
                    role: 'button',
                    tabIndex: 0,
                    'aria-label': `Show the responses with ${r.instructionId}`,
                    onClick: () => onPick(r.instructionId),
                    onKeyDown: (e: KeyboardEvent<SVGGElement>) => {
                      if (e.key !== 'Enter' && e.key !== ' ') return;
                      e.preventDefault();
                      onPick(r.instructionId);
                    },
                  }
                : {})}
            >
              <title>{`${r.instructionId}: strict ${r.strictPassed}/${r.count}, loose ${r.loosePassed}/${r.count}`}</title>
              <text className="chart__label" x={LABEL_W - 10} y={ROW_H / 2 + 4} textAnchor="end">
                {r.instructionId}
              </text>
              <rect className="chart__track" x={LABEL_W} y={4} width={BAR_W} height={ROW_H - 8} rx="3" />
              <rect className="chart__bar chart__bar--loose" x={LABEL_W} y={4} width={loose * BAR_W} height={ROW_H - 8} rx="3" />
              <rect
                className="chart__bar chart__bar--strict"
                x={LABEL_W}
                y={8}
                width={strict * BAR_W}
                height={ROW_H - 16}
                rx="2"
              />
              <text className="chart__value" x={LABEL_W + BAR_W + 10} y={ROW_H / 2 + 4}>
                {`${Math.round(strict * 100)}% / ${Math.round(loose * 100)}%`}
                <tspan className="chart__count">{` n=${r.count}`}</tspan>
              </text>
            </g>
          );
        })}
      </svg>
      <figcaption className="sr-only">
        {rows
          .map((r) => `${r.instructionId}: strict ${r.strictPassed} of ${r.count}, loose ${r.loosePassed} of ${r.count}`)
          .join('; ')}
      </figcaption>
    </figure>
  );
}
