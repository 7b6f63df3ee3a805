import { useRef } from 'react';

import {
  DEFAULT_MODEL_DOWNLOAD_BYTES,
  DEFAULT_MODEL_PACKED_BYTES,
  DEFAULT_MODEL_REPO,
  DEFAULT_MODEL_REVISION,
  type PrepareStep,
} from '../../../../electron/common/ipc-contract.js';
import { formatBytes } from '../../components/format.js';
import { Card } from '../../components/Card.js';
import { Field } from '../../components/Field.js';
import { Notice } from '../../components/Notice.js';
import { useFocusFallback } from '../../components/use-focus-fallback.js';
import { leftWorkToResume, useModels } from '../../stores/models.js';
import { useSystem } from '../../stores/system.js';
import { StepProgress } from './StepProgress.js';

const STEPS: readonly { step: PrepareStep; label: string }[] = [
  { step: 'download', label: 'Download' },
  { step: 'verify', label: 'Verify' },
  { step: 'pack', label: 'Pack to INT4' },
];

export function PrepareCard() {
  const form = useModels((s) => s.form);
  const formErrors = useModels((s) => s.formErrors);
  const job = useModels((s) => s.job);
  const setForm = useModels((s) => s.setForm);
  const prepare = useModels((s) => s.prepare);
  const cancel = useModels((s) => s.cancel);
  const submitting = useModels((s) => s.submitting);
  const running = job?.status === 'running';
  const isDefault = form.repo === DEFAULT_MODEL_REPO && form.revision === DEFAULT_MODEL_REVISION;
  // Only the same model picks up where the stopped job left off; another one is a new preparation.
  const resumable = job !== null && leftWorkToResume(job) && job.request.repo === form.repo.trim() && job.request.revision === form.revision.trim();
  const prepareButton = useRef<HTMLButtonElement>(null);
  const free = useSystem((s) => s.info?.dataDirFreeBytes ?? null);
  const dataDir = useSystem((s) => s.info?.dataDir ?? null);
  useFocusFallback(prepareButton, job?.status);

  return (
    <Card
      title="Prepare a model"
      subtitle="Download an OLMoE checkpoint from the Hugging Face Hub, verify every file, and pack its experts to INT4."
      testId="prepare-card"
    >
      <form
        className="form"
        onSubmit={(e) => {
          e.preventDefault();
          void prepare();
        }}
      >
        <div className="form__row">
          <Field
            label="Repository"
            value={form.repo}
            onValue={(repo) => setForm({ repo })}
            spellCheck={false}
            required
            error={formErrors.repo}
          />
          <Field
            label="Revision"
            value={form.revision}
            onValue={(revision) => setForm({ revision })}
            className="field--mono"
            spellCheck={false}
            required
            error={formErrors.revision}
            hint={isDefault ? 'Pinned default commit.' : 'Branch, tag or commit sha.'}
          />
        </div>
        <div className="form__row">
          <Field
            label="Access token (gated or private repos)"
            type="password"
            autoComplete="off"
            value={form.token}
            onValue={(token) => setForm({ token })}
            hint="Used for this download only; never stored."
          />
        </div>
        <DiskNote isDefault={form.repo.trim() === DEFAULT_MODEL_REPO} free={free} dataDir={dataDir} />
        <div className="form__actions">
          {!isDefault ? (
            <button
              type="button"
              className="btn btn--ghost"
              onClick={() => setForm({ repo: DEFAULT_MODEL_REPO, revision: DEFAULT_MODEL_REVISION })}
            >
              Use pinned default
            </button>
          ) : null}
          {running ? (
            <button type="button" className="btn" onClick={() => void cancel()}>
              Cancel
            </button>
          ) : null}
          <button type="submit" className="btn btn--primary" aria-disabled={running || submitting || undefined} ref={prepareButton}>
            {running ? 'Preparing…' : resumable ? 'Resume preparation' : 'Prepare'}
          </button>
        </div>
      </form>
      {job ? (
        <div className="steps" data-testid="prepare-progress">
          {STEPS.map(({ step, label }, i) => (
            <StepProgress
              key={step}
              label={label}
              progress={job.steps[step]}
              passed={job.status === 'done' || STEPS.slice(i + 1).some((s) => job.steps[s.step])}
              stopped={job.status === 'failed' || job.status === 'cancelled'}
            />
          ))}
          {job.status === 'done' ? <Notice tone="ok">Ready: {job.modelId}</Notice> : null}
          {job.status === 'cancelled' ? (
            <Notice tone="info">{leftWorkToResume(job) ? 'Cancelled. Prepare again to resume where it stopped.' : 'Cancelled before anything was downloaded.'}</Notice>
          ) : null}
          {job.error ? <Notice tone="error">{job.error}</Notice> : null}
        </div>
      ) : null}
    </Card>
  );
}

/** What preparing needs on disk beside what the data folder's disk has free (before anything is downloaded). */
export function DiskNote({ isDefault, free, dataDir }: { isDefault: boolean; free: number | null; dataDir: string | null }) {
  const where = dataDir ? ` in ${dataDir}` : '';
  if (!isDefault) {
    if (free === null) return null;
    return (
      <p className="disk-note muted" data-testid="disk-note">
        {`${formatBytes(free)} free${where}. The download's size is checked against it once the repository answers.`}
      </p>
    );
  }
  const needed = DEFAULT_MODEL_DOWNLOAD_BYTES + DEFAULT_MODEL_PACKED_BYTES;
  const short = free !== null && free < needed;
  const need = `Needs about ${formatBytes(DEFAULT_MODEL_DOWNLOAD_BYTES)} to download and ${formatBytes(DEFAULT_MODEL_PACKED_BYTES)} for the INT4 pack (${formatBytes(needed)} in all)`;
  const have = free === null ? '.' : short ? `; only ${formatBytes(free)} free${where}: free some space first.` : `; ${formatBytes(free)} free${where}.`;
  return (
    <p className={`disk-note ${short ? 'disk-note--short' : 'muted'}`} data-testid="disk-note">
      {need + have}
    </p>
  );
}
