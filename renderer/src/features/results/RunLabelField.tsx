import { useEffect, useRef, useState } from 'react';

import { RUN_LABEL_MAX } from '../../../../electron/common/run-label.js';
import { Field } from '../../components/Field.js';
import { useHistory } from '../../stores/history.js';

interface Props {
  runId: string;
  label: string | null;
}

/**
 * The open run's label ("baseline g32"), and its editor: Save stores it (empty clears it), Escape or Cancel leaves it
 * as it was. What the services refuse is said under the field, which keeps the text typed.
 */
export function RunLabelField({ runId, label }: Props) {
  const [draft, setDraft] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [saving, setSaving] = useState(false);
  const editButton = useRef<HTMLButtonElement>(null);
  const wasEditing = useRef(false);

  // Another run opened: its own label, not this one's draft.
  useEffect(() => {
    setDraft(null);
    setError(null);
  }, [runId]);
  // Back from editing: the focus returns to the button that started it.
  useEffect(() => {
    if (draft === null && wasEditing.current) editButton.current?.focus();
    wasEditing.current = draft !== null;
  }, [draft]);

  if (draft === null) {
    return (
      <p className="run-label" data-testid="run-label">
        {label !== null ? <strong className="run-label__text">{label}</strong> : null}
        <button type="button" className="link" ref={editButton} onClick={() => setDraft(label ?? '')}>
          {label !== null ? 'Edit label' : 'Add a label'}
        </button>
      </p>
    );
  }
  const save = async () => {
    setSaving(true);
    const problem = await useHistory.getState().setLabel(runId, draft);
    setSaving(false);
    if (problem) setError(problem);
    else setDraft(null);
  };
  const cancel = () => {
    setDraft(null);
    setError(null);
  };
  return (
    <form
      className="run-label run-label--editing"
      data-testid="run-label"
      onSubmit={(e) => {
        e.preventDefault();
        if (!saving) void save();
      }}
      onKeyDown={(e) => {
        if (e.key === 'Escape') {
          e.preventDefault();
          cancel();
        }
      }}
    >
      <Field
        label="Run label"
        value={draft}
        autoFocus
        placeholder="e.g. baseline g32"
        error={error}
        hint={`One line of at most ${RUN_LABEL_MAX} characters; empty removes the label. History and result ZIPs show it too.`}
        onValue={(v) => {
          setDraft(v);
          setError(null);
        }}
        trailing={
          <>
            <button type="submit" className="btn btn--small" disabled={saving}>
              {saving ? 'Saving…' : 'Save'}
            </button>
            <button type="button" className="btn btn--small" onClick={cancel} disabled={saving}>
              Cancel
            </button>
          </>
        }
      />
    </form>
  );
}
