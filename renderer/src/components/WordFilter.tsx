import { Field } from './Field.js';

interface Props {
  /** "Filter runs". */
  label: string;
  value: string;
  onValue(value: string): void;
  /** How many there are and, with a query, how many match ("1 of 2 runs"); read out as it changes. */
  count: string;
  countTestId: string;
  /** "No run matches “x”." with the button that clears the query, when nothing matches it. */
  noMatch: { readonly what: string; readonly clearLabel: string } | null;
}

/** A search field that narrows a list by words (matchesEveryWord), with its count and a way back when nothing matches. */
export function WordFilter({ label, value, onValue, count, countTestId, noMatch }: Props) {
  return (
    <>
      <div className="history__filter">
        <Field
          label={label}
          type="search"
          placeholder="label, model, device, status or id"
          value={value}
          onValue={onValue}
          hint={
            <span data-testid={countTestId} aria-live="polite">
              {count}
            </span>
          }
        />
      </div>
      {noMatch ? (
        <p className="muted">
          No {noMatch.what} matches “{value.trim()}”.{' '}
          <button type="button" className="link" onClick={() => onValue('')}>
            {noMatch.clearLabel}
          </button>
        </p>
      ) : null}
    </>
  );
}
