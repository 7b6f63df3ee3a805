import type { PrepareProgress } from '../../../../electron/common/ipc-contract.js';
import { formatBytes, formatDuration, formatRate } from '../../components/format.js';
import { ProgressBar } from '../../components/ProgressBar.js';

interface Props {
  label: string;
  progress: PrepareProgress | undefined;
}

/** One preparation step: its bar, bytes, rate and ETA. */
export function StepProgress({ label, progress: p }: Props) {
  const state = !p ? 'pending' : p.status === 'running' && p.doneBytes >= p.totalBytes && p.totalBytes > 0 ? 'done' : p.status;
  const done = state === 'done';
  return (
    <div className={`step step--${state}`} data-testid={`step-${label.toLowerCase().split(' ')[0]}`}>
      <div className="step__head">
        <span className="step__label">{label}</span>
        <span className="step__meta">
          {p ? (
            <>
              {p.totalBytes > 0 ? `${formatBytes(p.doneBytes)} / ${formatBytes(p.totalBytes)}` : p.message}
              {p.status === 'running' && !done ? (
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
        value={p ? (p.totalBytes > 0 ? p.doneBytes : done ? 1 : 0) : 0}
        max={p ? (p.totalBytes > 0 ? p.totalBytes : 1) : 1}
        tone={state === 'failed' ? 'bad' : done ? 'ok' : 'accent'}
      />
      {p?.file && !done ? <div className="step__file mono">{p.file}</div> : null}
    </div>
  );
}
