import type { PrepareProgress } from '../../../../electron/common/ipc-contract.js';
import { formatBytes, formatDuration, formatRate } from '../../components/format.js';
import { ProgressBar } from '../../components/ProgressBar.js';

interface Props {
  label: string;
  progress: PrepareProgress | undefined;
  /** A later step has started, so this one is finished even if it reported nothing. */
  passed?: boolean;
}

/** One preparation step: its bar, bytes, rate and ETA. */
export function StepProgress({ label, progress: p, passed = false }: Props) {
  const state =
    p?.status === 'failed' || p?.status === 'cancelled'
      ? p.status
      : passed || p?.status === 'done' || (p && p.totalBytes > 0 && p.doneBytes >= p.totalBytes)
        ? 'done'
        : p
          ? 'running'
          : 'pending';
  const done = state === 'done';
  return (
    <div className={`step step--${state}`} data-testid={`step-${label.toLowerCase().split(' ')[0]}`}>
      <div className="step__head">
        <span className="step__label">{label}</span>
        <span className="step__meta" title={p?.message}>
          {state === 'failed' || state === 'cancelled' ? (
            state
          ) : done && !(p && p.totalBytes > 0) ? (
            'done'
          ) : p ? (
            <>
              {p.totalBytes > 0 ? `${formatBytes(p.doneBytes)} / ${formatBytes(p.totalBytes)}` : p.message}
              {state === 'running' && p.totalBytes > 0 ? (
                <>
                  {' · '}
                  {formatRate(p.bytesPerSecond)} · ETA {formatDuration(p.etaSeconds)}
                </>
              ) : null}
            </>
          ) : (
            'waiting'
          )}
        </span>
      </div>
      <ProgressBar
        label={`${label} progress`}
        value={done ? 1 : p && p.totalBytes > 0 ? p.doneBytes / p.totalBytes : 0}
        max={1}
        tone={state === 'failed' ? 'bad' : done ? 'ok' : 'accent'}
      />
      {p?.file && !done ? <div className="step__file mono">{p.file}</div> : null}
    </div>
  );
}
