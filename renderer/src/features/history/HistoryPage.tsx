import { memo, useEffect, useMemo, useRef, useState } from 'react';

import { isLiveStatus, type RunSummary } from '../../../../electron/common/ipc-contract.js';
import { Card } from '../../components/Card.js';
import { DeletedNotice } from '../../components/DeletedNotice.js';
import { WordFilter } from '../../components/WordFilter.js';
import { baseName, formatDate, formatPercent, shortSha, weightsLabel } from '../../components/format.js';
import { Notice } from '../../components/Notice.js';
import { TableScroll } from '../../components/TableScroll.js';
import { useFocusFallback } from '../../components/use-focus-fallback.js';
import { useConnection } from '../../stores/connection.js';
import { runMatches, useHistory } from '../../stores/history.js';
import { useNav } from '../../stores/nav.js';
import { useResults } from '../../stores/results.js';
import { ResumeRunButton } from '../runs/ResumeRunButton.js';
import { ComparisonView } from './ComparisonView.js';
import { DeleteRunPanel } from './DeleteRunPanel.js';
import { VerifyCard } from './VerifyCard.js';

export function HistoryPage() {
  const runs = useHistory((s) => s.runs);
  const selected = useHistory((s) => s.selected);
  const comparison = useHistory((s) => s.comparison);
  const error = useHistory((s) => s.error);
  const deletion = useHistory((s) => s.deletion);
  const deleted = useHistory((s) => s.deleted);
  const filter = useHistory((s) => s.filter);
  const shown = useMemo(() => runs.filter((r) => runMatches(r, filter)), [runs, filter]);
  // While the server is away the app-wide notice says so; the list's own "did not answer" would only repeat it.
  const offline = useConnection((s) => !s.up);
  const { refresh, compare, cancelDelete, confirmDelete, setFilter } = useHistory.getState();

  useEffect(() => {
    void refresh();
    return () => useHistory.getState().dismissDeleted();
  }, [refresh]);

  // Focus after a deletion is confirmed or called off: a run's Delete button (or, when it has none to take it, the
  // run's link), or the Runs heading when no run is left. Applied once the table shows the change.
  const runsHeading = useRef<HTMLHeadingElement>(null);
  const rowButtons = useRef(new Map<string, RowButtons>());
  const [focusAfter, setFocusAfter] = useState<{ runId: string | null } | null>(null);
  useEffect(() => {
    if (!focusAfter) return;
    const row = focusAfter.runId === null ? undefined : rowButtons.current.get(focusAfter.runId);
    const target = row ? (row.del && !row.del.disabled ? row.del : row.link) : runsHeading.current;
    target?.focus();
    setFocusAfter(null);
  }, [focusAfter, shown, deletion]);
  // A run deleted in another window takes its row (or its open question) away, and the focus with it.
  useFocusFallback(runsHeading, `${shown.map((r) => r.id).join(' ')}|${deletion?.run.id ?? ''}`);
  const buttonsOf = (runId: string) => {
    let b = rowButtons.current.get(runId);
    if (!b) {
      b = { del: null, link: null };
      rowButtons.current.set(runId, b);
    }
    return b;
  };

  const onCancelDelete = () => {
    const runId = deletion?.run.id ?? null;
    cancelDelete();
    setFocusAfter({ runId });
  };
  const onConfirmDelete = async () => {
    const runId = deletion?.run.id;
    if (!runId) return;
    // The row that takes the deleted one's place, else the one above it.
    const i = shown.findIndex((r) => r.id === runId);
    const neighbour = shown[i + 1] ?? shown[i - 1];
    if (await confirmDelete()) {
      rowButtons.current.delete(runId);
      setFocusAfter({ runId: neighbour?.id ?? null });
    }
  };

  return (
    <div className="page">
      <header className="page__header">
        <div>
          <h1>History</h1>
          <p className="page__lede">Every run stored here: made on this machine or imported from a result ZIP. Pick two to compare them side by side.</p>
        </div>
        <button type="button" className="btn btn--primary" disabled={selected.length !== 2} onClick={() => void compare()}>
          Compare {selected.length === 2 ? 'A and B' : `(${selected.length}/2)`}
        </button>
      </header>
      {error && !offline ? <Notice tone="error">{error}</Notice> : null}
      <Card title="Runs" testId="history" headingRef={runsHeading}>
        {deleted ? (
          <DeletedNotice
            what={`run ${deleted.runId} and its ${deleted.responses} ${deleted.responses === 1 ? 'response' : 'responses'}`}
            deletedFiles={deleted.deletedFiles}
            fileErrors={deleted.fileErrors}
            zipName="result ZIP"
            testId="delete-done"
          />
        ) : null}
        {deletion ? <DeleteRunPanel deletion={deletion} onConfirm={() => void onConfirmDelete()} onCancel={onCancelDelete} /> : null}
        {runs.length > 1 || filter ? (
          <WordFilter
            label="Filter runs"
            value={filter}
            onValue={setFilter}
            count={filter.trim() ? `${shown.length} of ${runs.length} runs` : `${runs.length} runs`}
            countTestId="history-shown"
            noMatch={runs.length && !shown.length ? { what: 'run', clearLabel: 'Show every run' } : null}
          />
        ) : null}
        {shown.length ? (
          <TableScroll label="Runs table">
            <table className="table">
              <thead>
                <tr>
                  <th scope="col">
                    <span className="sr-only">Select</span>
                  </th>
                  <th scope="col">Run</th>
                  <th scope="col">Model · backend</th>
                  <th scope="col">Status</th>
                  <th scope="col">Prompts</th>
                  <th scope="col">
                    <abbr title="Prompt-level accuracy, strict / loose">Strict / loose</abbr>
                  </th>
                  <th scope="col">Started</th>
                  <th scope="col">
                    <span className="sr-only">Actions</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {shown.map((r) => (
                  <HistoryRow key={r.id} run={r} pick={selected.indexOf(r.id)} buttons={buttonsOf(r.id)} />
                ))}
              </tbody>
            </table>
          </TableScroll>
        ) : runs.length ? null : (
          <p className="muted">No runs yet.</p>
        )}
      </Card>
      {comparison ? <ComparisonView comparison={comparison} /> : null}
      <VerifyCard />
    </div>
  );
}

interface RowButtons {
  del: HTMLButtonElement | null;
  link: HTMLButtonElement | null;
}

/** A live run refreshes the list twice a second; the store keeps unchanged runs' objects, so their rows skip rendering. */
const HistoryRow = memo(function HistoryRow({ run: r, pick, buttons }: { run: RunSummary; pick: number; buttons: RowButtons }) {
  const { toggle, askDelete } = useHistory.getState();
  const go = useNav((s) => s.go);
  const openResults = useResults((s) => s.open);
  return (
    <tr className={pick >= 0 ? 'is-selected' : undefined}>
      <td>
        <input
          type="checkbox"
          checked={pick >= 0}
          onChange={() => toggle(r.id)}
          aria-label={`Select run ${r.id} for comparison`}
        />
        {pick >= 0 ? <span className="pick">{pick === 0 ? 'A' : 'B'}</span> : null}
      </td>
      <td>
        {r.label !== null ? <div className="history__label">{r.label}</div> : null}
        <button
          type="button"
          className="link mono nowrap"
          ref={(el) => void (buttons.link = el)}
          onClick={() => {
            void openResults(r.id);
            go('results');
          }}
        >
          {r.id}
        </button>
        {r.imported ? (
          <div className="muted small">
            <span className="chip chip--muted" title={`Imported from ${r.imported.file} on ${formatDate(r.imported.importedAt)}`}>
              imported
            </span>{' '}
            <span className="mono">{baseName(r.imported.file)}</span>
          </div>
        ) : null}
      </td>
      <td>
        {r.modelRepo} <span className="mono muted">{shortSha(r.modelRevision)}</span>
        <div className="muted small">
          {weightsLabel(r.modelId, r.weights)} · {r.backendLabel}
        </div>
      </td>
      <td>
        <span className={`status status--${r.status}`} title={r.error ?? undefined}>
          {r.status}
        </span>
        {r.error ? <div className="muted history__error">{r.error}</div> : null}
      </td>
      <td>
        {r.done}/{r.total}
      </td>
      <td className="nowrap">
        {formatPercent(r.accuracies?.promptStrict)} / {formatPercent(r.accuracies?.promptLoose)}
      </td>
      <td>{formatDate(r.createdAt)}</td>
      <td>
        <div className="row-actions">
          <ResumeRunButton run={r} />
          <button
            type="button"
            className="btn btn--small"
            ref={(el) => void (buttons.del = el)}
            aria-label={`Delete run ${r.id}`}
            disabled={isLiveStatus(r.status)}
            title={isLiveStatus(r.status) ? 'The run is still generating; cancel it before deleting it.' : undefined}
            onClick={() => void askDelete(r.id)}
          >
            Delete
          </button>
        </div>
      </td>
    </tr>
  );
});
