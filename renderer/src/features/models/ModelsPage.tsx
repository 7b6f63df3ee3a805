import { Fragment, useEffect } from 'react';

import { Card } from '../../components/Card.js';
import { formatBytes, formatDate, shortSha, weightsLabel } from '../../components/format.js';
import { Notice } from '../../components/Notice.js';
import { useModels } from '../../stores/models.js';
import { useNav } from '../../stores/nav.js';
import { useRuns } from '../../stores/runs.js';
import { useSystem } from '../../stores/system.js';
import { AssetsCard } from './AssetsCard.js';
import { DeleteModelPanel } from './DeleteModelPanel.js';
import { ModelDetailsView } from './ModelDetailsView.js';
import { PrepareCard } from './PrepareCard.js';
import { QualityCard } from './QualityCard.js';

export function ModelsPage() {
  const models = useModels((s) => s.models);
  const error = useModels((s) => s.error);
  const refresh = useModels((s) => s.refresh);
  const hasSystem = useSystem((s) => s.info !== null);
  const refreshSystem = useSystem((s) => s.refresh);
  const go = useNav((s) => s.go);
  const setRunForm = useRuns((s) => s.setForm);
  const details = useModels((s) => s.details);
  const deletion = useModels((s) => s.deletion);
  const deleted = useModels((s) => s.deleted);
  const { toggleDetails, askDelete, setDeleteScope, cancelDelete, confirmDelete } = useModels.getState();
  // The whole prepared revision: every variant listed for the same repo and commit.
  const revisionBytes = (m: { repo: string; revision: string }) =>
    models.filter((x) => x.repo === m.repo && x.revision === m.revision).reduce((n, x) => n + x.sizeBytes, 0);

  useEffect(() => {
    void refresh();
    if (!hasSystem) void refreshSystem();
  }, [refresh, hasSystem, refreshSystem]);

  return (
    <div className="page">
      <header className="page__header">
        <div>
          <h1>Models</h1>
          <p className="page__lede">Guided preparation: download, verify, pack. Interrupted steps resume.</p>
        </div>
      </header>
      {error ? <Notice tone="error">{error}</Notice> : null}
      <PrepareCard />
      <Card title="Prepared models" testId="models-list">
        {deleted ? (
          <Notice tone="ok">
            Deleted <span className="mono">{deleted.deletedDir}</span>, {formatBytes(deleted.freedBytes)} freed.
          </Notice>
        ) : null}
        {deletion ? (
          <DeleteModelPanel
            model={deletion.model}
            scope={deletion.scope}
            busy={deletion.busy}
            error={deletion.error}
            modelBytes={revisionBytes(deletion.model)}
            onScope={setDeleteScope}
            onConfirm={() => void confirmDelete()}
            onCancel={cancelDelete}
          />
        ) : null}
        {models.length ? (
          <table className="table">
            <thead>
              <tr>
                <th scope="col">Model</th>
                <th scope="col">Revision</th>
                <th scope="col">Weights</th>
                <th scope="col">Size</th>
                <th scope="col">Prepared</th>
                <th scope="col">
                  <span className="sr-only">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {models.map((m) => (
                <Fragment key={m.id}>
                  <tr>
                    <td>{m.repo}</td>
                    <td className="mono">{shortSha(m.revision)}</td>
                    <td>
                      <span className="chip chip--muted">{weightsLabel(m.id, m.weights)}</span>
                    </td>
                    <td className="nowrap">{formatBytes(m.sizeBytes)}</td>
                    <td>{formatDate(m.preparedAt)}</td>
                    <td className="table__actions">
                      <div className="row-actions">
                        {m.ready ? (
                          <button
                            type="button"
                            className="btn btn--small"
                            onClick={() => {
                              setRunForm({ modelId: m.id });
                              go('run');
                            }}
                          >
                            Run IFEval
                          </button>
                        ) : (
                          <span className="chip chip--bad">incomplete</span>
                        )}
                        <button
                          type="button"
                          className="btn btn--small"
                          aria-expanded={details?.modelId === m.id}
                          aria-label={`Details of ${m.id}`}
                          onClick={() => void toggleDetails(m.id)}
                        >
                          Details
                        </button>
                        <button type="button" className="btn btn--small" aria-label={`Delete ${m.id}`} onClick={() => askDelete(m)}>
                          Delete…
                        </button>
                      </div>
                    </td>
                  </tr>
                  {details?.modelId === m.id ? (
                    <tr className="details-row">
                      <td colSpan={6}>
                        {details.value ? (
                          <ModelDetailsView details={details.value} />
                        ) : details.error ? (
                          <Notice tone="error">{details.error}</Notice>
                        ) : (
                          <p className="muted">Reading the model's folder…</p>
                        )}
                      </td>
                    </tr>
                  ) : null}
                </Fragment>
              ))}
            </tbody>
          </table>
        ) : (
          <p className="muted">No prepared models yet.</p>
        )}
      </Card>
      <QualityCard models={models} />
      <AssetsCard />
    </div>
  );
}
