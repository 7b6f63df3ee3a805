import { useEffect, useRef } from 'react';

import type { DeleteModelRequest, PreparedModel } from '../../../../electron/common/ipc-contract.js';
import { formatBytes, shortSha } from '../../components/format.js';
import { Notice } from '../../components/Notice.js';

interface Props {
  model: PreparedModel;
  scope: DeleteModelRequest['scope'];
  busy: boolean;
  error: string | null;
  /** Bytes of the checkpoint and every pack, for the whole-model choice. */
  modelBytes: number;
  onScope(scope: DeleteModelRequest['scope']): void;
  onConfirm(): void;
  onCancel(): void;
}

/** Asks before a model's files are deleted, inside the page; for an INT4 variant, the pack alone or the whole model. */
export function DeleteModelPanel({ model, scope, busy, error, modelBytes, onScope, onConfirm, onCancel }: Props) {
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => heading.current?.focus(), [model.id]);
  const name = `${model.repo} @ ${shortSha(model.revision)}`;
  return (
    <section
      className="confirm"
      aria-labelledby="delete-model-title"
      data-testid="delete-model-confirm"
      onKeyDown={(e) => {
        if (e.key === 'Escape' && !busy) {
          e.preventDefault();
          onCancel();
        }
      }}
    >
      <h3 id="delete-model-title" className="confirm__title" tabIndex={-1} ref={heading}>
        Delete {name}?
      </h3>
      {model.weights === 'int4' ? (
        <fieldset className="confirm__choices" disabled={busy}>
          <legend className="sr-only">What to delete</legend>
          <label className="confirm__option">
            <input type="radio" name="delete-scope" checked={scope === 'variant'} onChange={() => onScope('variant')} />
            <span>
              Only its INT4 pack ({formatBytes(model.sizeBytes)}); the BF16 checkpoint stays, and can be packed again.
            </span>
          </label>
          <label className="confirm__option">
            <input type="radio" name="delete-scope" checked={scope === 'model'} onChange={() => onScope('model')} />
            <span>The whole model: checkpoint and packs ({formatBytes(modelBytes)}); preparing it again downloads it again.</span>
          </label>
        </fieldset>
      ) : (
        <p>
          The BF16 checkpoint is what every variant is read from: this deletes the whole model, checkpoint and packs (
          {formatBytes(modelBytes)}).
        </p>
      )}
      <p className="muted">Runs already stored keep their results; they can no longer be resumed.</p>
      {error ? <Notice tone="error">{error}</Notice> : null}
      <div className="form__actions">
        <button type="button" className="btn" onClick={busy ? undefined : onCancel} aria-disabled={busy || undefined}>
          Keep it
        </button>
        <button type="button" className="btn btn--danger" onClick={busy ? undefined : onConfirm} aria-disabled={busy || undefined}>
          {busy ? 'Deleting…' : scope === 'variant' ? 'Delete the INT4 pack' : 'Delete the model'}
        </button>
      </div>
    </section>
  );
}
