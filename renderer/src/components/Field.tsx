import { useId, type InputHTMLAttributes, type ReactNode } from 'react';

interface Props extends Omit<InputHTMLAttributes<HTMLInputElement>, 'onChange'> {
  label: string;
  hint?: ReactNode;
  /** Shown beside the input, e.g. a Browse… button. */
  trailing?: ReactNode;
  /** What is wrong with the value, shown under the input and read with it. */
  error?: string | null;
  onValue(value: string): void;
}

/** A labelled text input. */
export function Field({ label, hint, trailing, error, onValue, className, ...input }: Props) {
  const id = useId();
  const hintId = `${id}-hint`;
  const errorId = `${id}-error`;
  const describedBy = [error ? errorId : null, hint ? hintId : null].filter(Boolean).join(' ') || undefined;
  const control = (
    <input id={id} aria-describedby={describedBy} aria-invalid={error ? true : undefined} onChange={(e) => onValue(e.target.value)} {...input} />
  );
  return (
    <div className={`field ${error ? 'field--invalid' : ''} ${className ?? ''}`}>
      <label htmlFor={id}>{label}</label>
      {trailing ? (
        <div className="field__control">
          {control}
          {trailing}
        </div>
      ) : (
        control
      )}
      {error ? (
        <div className="field__error" id={errorId}>
          {error}
        </div>
      ) : null}
      {hint ? (
        <div className="field__hint" id={hintId}>
          {hint}
        </div>
      ) : null}
    </div>
  );
}
