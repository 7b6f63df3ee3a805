import { useEffect, useRef } from 'react';

import { formatBytes, formatDate } from '../../components/format.js';
import { Notice } from '../../components/Notice.js';
import type { PendingDeletion } from '../../stores/history.js';
import { useHistory } from '../../stores/history.js';

interface Props {
  deletion: PendingDeletion;
  onConfirm(): void;
  onCancel(): void;
}

/**
 * Asks before a run is deleted, inside the page: names the run, says how many responses go with it, and offers to
 * delete its result ZIPs in exports/ when it has any. Its question takes the focus; Escape calls it off.
 */
export function DeleteRunPanel({ deletion, onConfirm, onCancel }: Props) {
  const { run, zips, deleteZips, busy, error } = deletion;
  const setDeleteZips = useHistory((s) => s.setDeleteZips);
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => {
    heading.current?.focus();
  }, [run.id]);
  const responses = `${run.done} scored ${run.done === 1 ? 'response' : 'responses'}`;
  return (
    <section
      className="confirm"
      aria-labelledby="delete-run-title"
      data-testid="delete-confirm"
      onKeyDown={(e) => {
        if (e.key === 'Escape' && !busy) {
          e.preventDefault();
          onCancel();
        }
      }}
    >
      <h3 id="delete-run-title" className="confirm__title" tabIndex={-1} ref={heading}>
        Delete run <span className="mono">{run.id}</span>?
      </h3>
      <p data-testid="delete-summary">
        The {run.status} run of {run.modelRepo} started {formatDate(run.createdAt)} holds {responses} of its {run.total}{' '}
        prompts. Deleting it removes them, their verdicts and the run's figures from the database for good.
      </p>
      {zips === null ? (
        <p className="muted">Looking for its exported ZIPs…</p>
      ) : zips.length ? (
        <label className="confirm__option">
          <input type="checkbox" checked={deleteZips} disabled={busy} onChange={(e) => setDeleteZips(e.target.checked)} />
          <span>
            Also delete its exported {zips.length === 1 ? 'ZIP' : 'ZIPs'}:{' '}
            {zips.map((z, i) => (
              <span key={z.path}>
                {i > 0 ? ', ' : ''}
                <span className="mono">exports/{z.name}</span> ({formatBytes(z.bytes)})
              </span>
            ))}
          </span>
        </label>
      ) : (
        <p className="muted">It has no exported ZIP in the data folder's exports/.</p>
      )}
      {error ? <Notice tone="error">{error}</Notice> : null}
      <div className="form__actions">
        <button type="button" className="btn" onClick={busy ? undefined : onCancel} aria-disabled={busy || undefined}>
          Keep it
        </button>
        <button type="button" className="btn btn--danger" onClick={busy ? undefined : onConfirm} aria-disabled={busy || undefined}>
          {busy ? 'Deleting…' : 'Delete run'}
        </button>
      </div>
    </section>
  );
}
