import type { PreparedModel } from '../../../electron/common/ipc-contract.js';
import { weightsLabel } from './format.js';
import { SelectField } from './SelectField.js';

/** The prepared models to run, each as repo · commit · weights; says so when there is none. */
export function ModelSelect(props: { models: readonly PreparedModel[]; value: string; onValue: (modelId: string) => void; disabled?: boolean }) {
  return (
    <SelectField label="Model" value={props.value} onValue={props.onValue} disabled={props.disabled} className="field--grow">
      {props.models.length === 0 ? <option value="">No prepared model</option> : null}
      {props.models.map((m) => (
        <option key={m.id} value={m.id}>
          {m.repo} · {m.revision.slice(0, 7)} · {weightsLabel(m.id, m.weights)}
        </option>
      ))}
    </SelectField>
  );
}
