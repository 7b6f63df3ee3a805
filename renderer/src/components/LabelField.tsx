import { useEffect, useRef, useState } from 'react';

import { LABEL_MAX } from '../../../electron/common/label.js';
import { Field } from './Field.js';

interface Props {
  /** The run or campaign labelled: another one starts the field over. */
  subject: string;
  label: string | null;
  /** "Run label", "Campaign label": the field's name. */
  name: string;
  /** Where else the label is shown, for the hint. */
  shownIn: string;
  /** Stores the text (empty clears the label); the refusal as a sentence, or null once stored. */
  save(text: string): Promise<string | null>;
}

/**
 * A run's or campaign's label ("baseline g32"), and its editor: Save stores it (empty clears it), Escape or Cancel
 * leaves it as it was. What is refused is said under the field, which keeps the text typed.
 */
export function LabelField({ subject, label, name, shownIn, save: store }: Props) {
  const [draft, setDraft] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [saving, setSaving] = useState(false);
  const editButton = useRef<HTMLButtonElement>(null);
  const wasEditing = useRef(false);

  // Another run or campaign shown: its own label, not this one's draft.
  useEffect(() => {
    setDraft(null);
    setError(null);
  }, [subject]);
  // Back from editing: the focus returns to the button that started it.
  useEffect(() => {
    if (draft === null && wasEditing.current) editButton.current?.focus();
    wasEditing.current = draft !== null;
  }, [draft]);

  if (draft === null) {
    return (
      <p className="label-field" data-testid="label-field">
        {label !== null ? <strong className="label-field__text">{label}</strong> : null}
        <button type="button" className="link" ref={editButton} onClick={() => setDraft(label ?? '')}>
          {label !== null ? 'Edit label' : 'Add a label'}
        </button>
      </p>
    );
  }
  const save = async () => {
    setSaving(true);
    const problem = await store(draft);
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
      className="label-field label-field--editing"
      data-testid="label-field"
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
        label={name}
        value={draft}
        autoFocus
        placeholder="e.g. baseline g32"
        error={error}
        hint={`One line of at most ${LABEL_MAX} characters; empty removes the label. ${shownIn}`}
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
