import { ConfirmPanel } from '../../components/ConfirmPanel.js';
import { ExportZipsOption } from '../../components/ExportZipsOption.js';
import { formatDate } from '../../components/format.js';
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
  const responses = `${run.done} scored ${run.done === 1 ? 'response' : 'responses'}`;
  return (
    <ConfirmPanel
      titleId="delete-run-title"
      title={
        <>
          Delete run <span className="mono">{run.id}</span>?
        </>
      }
      testId="delete-confirm"
      subject={run.id}
      busy={busy}
      error={error}
      keepLabel="Keep it"
      confirmLabel="Delete run"
      onConfirm={onConfirm}
      onCancel={onCancel}
    >
      <p data-testid="delete-summary">
        The {run.status} run of {run.modelRepo} started {formatDate(run.createdAt)} holds {responses} of its {run.total}{' '}
        prompts. Deleting it removes them, their verdicts and the run's figures from the database for good.
      </p>
      <ExportZipsOption zips={zips} checked={deleteZips} disabled={busy} onChange={setDeleteZips} />
    </ConfirmPanel>
  );
}
