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

function RowContent({ row: r }: { row: InstructionTypeRow }) {
  const strict = percent(r.strictPassed, r.count);
  const loose = percent(r.loosePassed, r.count);
  return (
    <>
      <span className="chart__label">
        <BreakableId id={r.instructionId} />
      </span>
      <span className="chart__track" aria-hidden="true">
        <span className="chart__bar chart__bar--loose" style={{ width: `${loose}%` }} />
        <span className="chart__bar chart__bar--strict" style={{ width: `${strict}%` }} />
      </span>
      <span className="chart__value">
        <span className="sr-only">{`strict ${r.strictPassed} of ${r.count}, loose ${r.loosePassed} of ${r.count}`}</span>
        <span aria-hidden="true">
          {`${Math.round(strict)}% / ${Math.round(loose)}%`}
          <span className="chart__count">{` n=${r.count}`}</span>
        </span>
      </span>
    </>
  );
}

/**
 * Strict and loose accuracy per instruction type as horizontal bars. HTML rather than a scaled SVG, so that the text
 * keeps its size in a narrow window and each row can be a real button.
 */
export function InstructionChart({ rows, onPick }: Props) {
  return (
    <figure className="chart">
      <figcaption className="chart__legend">
        <span className="sr-only">Accuracy per instruction type, strict and loose. </span>
        <span aria-hidden="true">
          <span className="chart__key chart__key--loose" /> loose <span className="chart__key chart__key--strict" /> strict
        </span>
      </figcaption>
      <ul className="chart__rows" data-testid="instruction-chart">
        {rows.map((r) => (
          <li key={r.instructionId}>
            {onPick ? (
              <button
                type="button"
                className="chart__row chart__row--link"
                aria-label={`Show the responses with ${r.instructionId} (strict ${r.strictPassed} of ${r.count}, loose ${r.loosePassed} of ${r.count})`}
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
    </figure>
  );
}
