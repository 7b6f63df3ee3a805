import { Card } from '../../components/Card.js';
import { Field } from '../../components/Field.js';
import { formatPercent } from '../../components/format.js';
import { Notice } from '../../components/Notice.js';
import { UncheckedList } from '../../components/UncheckedList.js';
import { useHistory } from '../../stores/history.js';
import { BrowseButton } from '../system/BrowseButton.js';

/** Verifies any result ZIP: every sha256, then a re-score of the retained responses. */
export function VerifyCard() {
  const zipPath = useHistory((s) => s.zipPath);
  const report = useHistory((s) => s.verifyReport);
  const error = useHistory((s) => s.verifyError);
  const verifying = useHistory((s) => s.verifying);
  const { setZipPath, verifyZip } = useHistory.getState();
  return (
    <Card title="Verify a result ZIP" subtitle="Checks every file hash and re-scores the retained responses." testId="verify-card">
      <form
        className="asset__row"
        onSubmit={(e) => {
          e.preventDefault();
          void verifyZip();
        }}
      >
        <Field
          label="Result ZIP"
          value={zipPath}
          onValue={setZipPath}
          placeholder="/path/to/result.zip"
          className="field--mono field--grow"
          spellCheck={false}
          trailing={
            <BrowseButton
              what="a result ZIP"
              request={{ kind: 'file', title: 'Result ZIP', filters: [{ name: 'ZIP', extensions: ['zip'] }] }}
              onPath={setZipPath}
            />
          }
        />
        <button type="submit" className="btn" aria-disabled={verifying || undefined}>
          {verifying ? 'Verifying…' : 'Verify'}
        </button>
      </form>
      {error ? <Notice tone="error">{error}</Notice> : null}
      {report ? (
        <Notice tone={report.verified ? 'ok' : 'error'}>
          {report.verified
            ? `Verified. Prompt-level strict ${formatPercent(report.accuracies?.promptStrict)}, loose ${formatPercent(report.accuracies?.promptLoose)}.`
            : 'Verification failed:'}
          {report.verified && report.run && report.run.status !== 'completed'
            ? ` A ${report.run.status} run: ${report.run.responses} of ${report.run.total} prompts.`
            : null}
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
    </Card>
  );
}
