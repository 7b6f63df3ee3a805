import { useEffect } from 'react';

import { Card } from '../../components/Card.js';
import { formatDate, formatPercent, shortSha } from '../../components/format.js';
import { Notice } from '../../components/Notice.js';
import { TableScroll } from '../../components/TableScroll.js';
import { useHistory } from '../../stores/history.js';
import { useNav } from '../../stores/nav.js';
import { useResults } from '../../stores/results.js';
import { ComparisonView } from './ComparisonView.js';
import { VerifyCard } from './VerifyCard.js';

export function HistoryPage() {
  const runs = useHistory((s) => s.runs);
  const selected = useHistory((s) => s.selected);
  const comparison = useHistory((s) => s.comparison);
  const error = useHistory((s) => s.error);
  const { refresh, toggle, compare } = useHistory.getState();
  const go = useNav((s) => s.go);
  const openResults = useResults((s) => s.open);

  useEffect(() => {
    void refresh();
  }, [refresh]);

  return (
    <div className="page">
      <header className="page__header">
        <div>
          <h1>History</h1>
          <p className="page__lede">Every run on this machine. Pick two to compare them side by side.</p>
        </div>
        <button type="button" className="btn btn--primary" disabled={selected.length !== 2} onClick={() => void compare()}>
          Compare {selected.length === 2 ? 'A and B' : `(${selected.length}/2)`}
        </button>
      </header>
      {error ? <Notice tone="error">{error}</Notice> : null}
      <Card title="Runs" testId="history">
        {runs.length ? (
          <TableScroll label="Runs table">
            <table className="table">
              <thead>
                <tr>
                  <th scope="col">
                    <span className="sr-only">Select</span>
                  </th>
                  <th scope="col">Run</th>
                  <th scope="col">Model</th>
                  <th scope="col">Backend</th>
                  <th scope="col">Status</th>
                  <th scope="col">Prompts</th>
                  <th scope="col">Prompt strict</th>
                  <th scope="col">Prompt loose</th>
                  <th scope="col">Started</th>
                </tr>
              </thead>
              <tbody>
                {runs.map((r) => {
                  const idx = selected.indexOf(r.id);
                  return (
                    <tr key={r.id} className={idx >= 0 ? 'is-selected' : undefined}>
                      <td>
                        <input
                          type="checkbox"
                          checked={idx >= 0}
                          onChange={() => toggle(r.id)}
                          aria-label={`Select run ${r.id} for comparison`}
                        />
                        {idx >= 0 ? <span className="pick">{idx === 0 ? 'A' : 'B'}</span> : null}
                      </td>
                      <td>
                        <button
                          type="button"
                          className="link mono nowrap"
                          onClick={() => {
                            void openResults(r.id);
                            go('results');
                          }}
                        >
                          {r.id}
                        </button>
                      </td>
                      <td>
                        {r.modelRepo} <span className="mono muted">{shortSha(r.modelRevision)}</span>
                      </td>
                      <td>{r.backendLabel}</td>
                      <td>
                        <span className={`status status--${r.status}`} title={r.error ?? undefined}>
                          {r.status}
                        </span>
                        {r.error ? <div className="muted history__error">{r.error}</div> : null}
                      </td>
                      <td>
                        {r.done}/{r.total}
                      </td>
                      <td>{formatPercent(r.accuracies?.promptStrict)}</td>
                      <td>{formatPercent(r.accuracies?.promptLoose)}</td>
                      <td>{formatDate(r.createdAt)}</td>
                    </tr>
                  );
                })}
              </tbody>
            </table>
          </TableScroll>
        ) : (
          <p className="muted">No runs yet.</p>
        )}
      </Card>
      {comparison ? <ComparisonView comparison={comparison} /> : null}
      <VerifyCard />
    </div>
  );
}
