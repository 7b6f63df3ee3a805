import type { PrepareProgress } from '../../../../electron/common/ipc-contract.js';
import { formatBytes, formatDuration, formatRate } from '../../components/format.js';
import { ProgressBar } from '../../components/ProgressBar.js';

interface Props {
  label: string;
  progress: PrepareProgress | undefined;
  /** A later step has started, so this one is finished even if it reported nothing. */
  passed?: boolean;
  /** The job ended (failed, cancelled): a step it never reached is not waiting for anything. */
  stopped?: boolean;
}

/** One preparation step: its bar, bytes, rate and ETA. */
export function StepProgress({ label, progress: p, passed = false, stopped = false }: Props) {
  const state =
    p?.status === 'failed' || p?.status === 'cancelled'
      ? p.status
      : passed || p?.status === 'done' || (p && p.totalBytes > 0 && p.doneBytes >= p.totalBytes)
        ? 'done'
        : p
          ? stopped
            ? 'stopped'
            : 'running'
          : 'pending';
  const done = state === 'done';
  return (
    <div className={`step step--${state}`} data-testid={`step-${label.toLowerCase().split(' ')[0]}`}>
      <div className="step__head">
        <span className="step__label">{label}</span>
        <span className="step__meta" title={p?.message}>
          {state === 'failed' || state === 'cancelled' || state === 'stopped' ? (
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
          ) : stopped ? (
            'not started'
          ) : (
            'waiting'
          )}
        </span>
      </div>
      <ProgressBar
        label={`${label} progress`}
        value={done ? 1 : p && p.totalBytes > 0 ? p.doneBytes / p.totalBytes : 0}
        max={1}
        valueText={p && p.totalBytes > 0 ? `${formatBytes(p.doneBytes)} of ${formatBytes(p.totalBytes)}` : done ? 'done' : undefined}
        tone={state === 'failed' ? 'bad' : done ? 'ok' : 'accent'}
      />
      {p?.file && !done ? <div className="step__file mono">{p.file}</div> : null}
    </div>
  );
}
