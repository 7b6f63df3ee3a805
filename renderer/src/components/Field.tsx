import { useId, type InputHTMLAttributes, type ReactNode } from 'react';

interface Props extends Omit<InputHTMLAttributes<HTMLInputElement>, 'onChange'> {
  label: string;
  hint?: ReactNode;
  /** Shown beside the input, e.g. a Browse… button. */
  trailing?: ReactNode;
  onValue(value: string): void;
}

/** A labelled text input. */
export function Field({ label, hint, trailing, onValue, className, ...input }: Props) {
  const id = useId();
  const hintId = `${id}-hint`;
  return (
    <div className={`field ${className ?? ''}`}>
      <label htmlFor={id}>{label}</label>
      {trailing ? (
        <div className="field__control">
          <input id={id} aria-describedby={hint ? hintId : undefined} onChange={(e) => onValue(e.target.value)} {...input} />
          {trailing}
        </div>
      ) : (
        <input id={id} aria-describedby={hint ? hintId : undefined} onChange={(e) => onValue(e.target.value)} {...input} />
      )}
      {hint ? (
        <div className="field__hint" id={hintId}>
          {hint}
        </div>
      ) : null}
    </div>
  );
}
