import { isLiveStatus, type RunSummary } from '../../../../electron/common/ipc-contract.js';
import { useNav } from '../../stores/nav.js';
import { isResumable, useRuns } from '../../stores/runs.js';

/**
 * Resumes a cancelled or failed run from wherever it is listed, then shows it on the Run page (its live card, or the
 * reason it could not resume). Renders nothing for a run that cannot be resumed.
 */
export function ResumeRunButton({ run, className = 'btn btn--small' }: { run: Pick<RunSummary, 'id' | 'status' | 'done' | 'total' | 'imported'>; className?: string }) {
  const busy = useRuns((s) => s.busy);
  const live = useRuns((s) => s.run !== null && isLiveStatus(s.run.status));
  const go = useNav((s) => s.go);
  if (!isResumable(run)) return null;
  return (
    <button
      type="button"
      className={className}
      aria-label={`Resume run ${run.id}`}
      aria-disabled={busy || live || undefined}
      title={live ? 'Another run is generating; cancel it or let it finish first.' : `Continue from prompt ${run.done + 1} of ${run.total}`}
      onClick={() => {
        if (busy || live) return;
        void useRuns.getState().resume(run.id).then(() => go('run'));
      }}
    >
      Resume
    </button>
  );
}
