import { cutSentence, describeZipSubject } from '../../../../electron/common/zip-subject.js';
import { qualitySummary } from '../../../../electron/common/quality-summary.js';
import { Card } from '../../components/Card.js';
import { formatDate, formatPercent } from '../../components/format.js';
import { Notice } from '../../components/Notice.js';
import { UncheckedList } from '../../components/UncheckedList.js';
import { useHistory } from '../../stores/history.js';
import { useNav } from '../../stores/nav.js';
import { useResults } from '../../stores/results.js';
import { ZipPathField } from '../system/BrowseButton.js';

/**
 * Verifies any result ZIP (every sha256, then a re-score of the retained responses), and adds a verified one's run to
 * History: another machine's run, or a colleague's, then reads and compares like one made here.
 */
export function VerifyCard() {
  const zipPath = useHistory((s) => s.zipPath);
  const report = useHistory((s) => s.verifyReport);
  const error = useHistory((s) => s.verifyError);
  const verifying = useHistory((s) => s.verifying);
  const imported = useHistory((s) => s.imported);
  const importError = useHistory((s) => s.importError);
  const importing = useHistory((s) => s.importing);
  const go = useNav((s) => s.go);
  const { setZipPath, verifyZip, importZip } = useHistory.getState();
  const busy = verifying || importing;
  return (
    <Card
      title="Verify or import a result ZIP"
      subtitle="Checks every file hash and re-scores the retained responses (a campaign ZIP: recomputes its figures); a run that verifies can be added to History."
      testId="verify-card"
    >
      <form
        className="asset__row"
        onSubmit={(e) => {
          e.preventDefault();
          if (!busy) void verifyZip();
        }}
      >
        <ZipPathField title="Result ZIP" what="a result ZIP" value={zipPath} onValue={setZipPath} />
        <button type="submit" className="btn" aria-disabled={busy || undefined}>
          {verifying ? 'Verifying…' : 'Verify'}
        </button>
        <button
          type="button"
          className="btn"
          aria-disabled={busy || undefined}
          title="Verifies the ZIP, then stores its run beside yours: read, compare, export and delete it; it cannot be resumed here."
          onClick={() => {
            if (!busy) void importZip();
          }}
        >
          {importing ? 'Adding…' : 'Add to History'}
        </button>
      </form>
      {error ? <Notice tone="error">{error}</Notice> : null}
      {report ? (
        <Notice tone={report.verified ? 'ok' : 'error'}>
          {!report.verified
            ? 'Verification failed:'
            : report.kind === 'campaign'
              ? 'Verified: a performance campaign ZIP, every aggregate recomputed from its requests. The Performance page imports it.'
              : `Verified. Prompt-level strict ${formatPercent(report.accuracies?.promptStrict)}, loose ${formatPercent(report.accuracies?.promptLoose)}.`}
          {report.verified && report.run && report.run.status !== 'completed'
            ? ` A ${report.run.status} run: ${report.run.responses} of ${report.run.total} prompts.`
            : null}
          {report.subject ? (
            <div className="small" data-testid="verify-subject">
              The ZIP says it holds {describeZipSubject(report.kind, report.subject, formatDate)}.
            </div>
          ) : null}
          {report.cut && report.cut.of > 0 ? (
            <div className="small" data-testid="verify-cut">
              {cutSentence(report.cut)}.
            </div>
          ) : null}
          {report.quality ? (
            <div className="small" data-testid="verify-quality">
              It carries its model's {qualitySummary(report.quality)}, not re-checked (that needs the model).
            </div>
          ) : null}
          {report.problems.length ? (
            <ul>
              {report.problems.map((p) => (
                <li key={p}>{p}</li>
              ))}
            </ul>
          ) : null}
          <UncheckedList items={report.unchecked} testId="verify-unchecked" />
        </Notice>
      ) : null}
      {importError ? (
        <Notice tone="error">
          <span data-testid="import-error">{importError}</span>
        </Notice>
      ) : null}
      {imported ? (
        <Notice tone="ok">
          <span data-testid="import-done">
            Added run <span className="mono">{imported.run.id}</span> to History ({imported.run.status}, {imported.run.done} of{' '}
            {imported.run.total} prompts, {imported.run.backendLabel}).
          </span>{' '}
          <button
            type="button"
            className="link"
            onClick={() => {
              void useResults.getState().open(imported.run.id);
              go('results');
            }}
          >
            Open its results
          </button>
          <UncheckedList items={imported.unchecked} testId="import-unchecked" />
        </Notice>
      ) : null}
    </Card>
  );
}
