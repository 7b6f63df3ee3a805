import type { DeleteModelRequest, PreparedModel } from '../../../../electron/common/ipc-contract.js';
import { ConfirmPanel } from '../../components/ConfirmPanel.js';
import { formatBytes, shortSha } from '../../components/format.js';

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
  return (
    <ConfirmPanel
      titleId="delete-model-title"
      title={`Delete ${model.repo} @ ${shortSha(model.revision)}?`}
      testId="delete-model-confirm"
      subject={model.id}
      busy={busy}
      error={error}
      keepLabel="Keep it"
      confirmLabel={scope === 'variant' ? 'Delete the INT4 pack' : 'Delete the model'}
      onConfirm={onConfirm}
      onCancel={onCancel}
    >
      {model.weights === 'int4' ? (
        <fieldset className="confirm__choices" disabled={busy}>
          <legend className="sr-only">What to delete</legend>
          <label className="confirm__option">
            <input type="radio" name="delete-scope" checked={scope === 'variant'} onChange={() => onScope('variant')} />
            <span>Only its INT4 pack ({formatBytes(model.sizeBytes)}); the BF16 checkpoint stays, and can be packed again.</span>
          </label>
          <label className="confirm__option">
            <input type="radio" name="delete-scope" checked={scope === 'model'} onChange={() => onScope('model')} />
            <span>The whole model: checkpoint and packs ({formatBytes(modelBytes)}); preparing it again downloads it again.</span>
          </label>
        </fieldset>
      ) : (
        <p>
          The BF16 checkpoint is what every variant is read from: this deletes the whole model, checkpoint and packs ({formatBytes(modelBytes)}).
        </p>
      )}
      <p className="muted">Runs already stored keep their results; they can no longer be resumed.</p>
    </ConfirmPanel>
  );
}
