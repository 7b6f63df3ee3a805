interface Props {
  pass: boolean;
  /** Shown before the verdict, e.g. "strict". */
  label?: string;
}

/** A pass/fail chip that reads the same to screen readers as it looks. */
export function Verdict({ pass, label }: Props) {
  const text = pass ? 'pass' : 'fail';
  return (
    <span className={`chip chip--${pass ? 'ok' : 'bad'}`} aria-label={label ? `${label}: ${text}` : text}>
      <span aria-hidden="true">{pass ? '✓' : '✗'}</span> {label ? `${label} ` : ''}
      {text}
    </span>
  );
}
