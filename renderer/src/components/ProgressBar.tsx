interface Props {
  value: number;
  max: number;
  label: string;
  /** What a screen reader says instead of the bare percentage, e.g. "12 of 541 prompts". */
  valueText?: string;
  tone?: 'accent' | 'ok' | 'bad' | 'muted';
}

/** An accessible determinate progress bar; `max` 0 renders an empty track. */
export function ProgressBar({ value, max, label, valueText, tone = 'accent' }: Props) {
  const pct = max > 0 ? Math.min(100, Math.max(0, (value / max) * 100)) : 0;
  return (
    <div
      className={`progress progress--${tone}`}
      role="progressbar"
      aria-label={label}
      aria-valuemin={0}
      aria-valuemax={100}
      aria-valuenow={Math.round(pct)}
      aria-valuetext={valueText}
    >
      <div className="progress__fill" style={{ width: `${pct}%` }} />
    </div>
  );
}
