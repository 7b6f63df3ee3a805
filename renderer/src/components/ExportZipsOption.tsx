import type { ExportFile } from '../../../electron/common/ipc-contract.js';
import { formatBytes } from './format.js';

interface Props {
  /** The ZIPs in exports/; null while they are being looked up. */
  zips: readonly ExportFile[] | null;
  checked: boolean;
  disabled: boolean;
  onChange(on: boolean): void;
}

/** A delete-confirm panel's offer to delete what was exported of its subject too, once the ZIPs are known. */
export function ExportZipsOption({ zips, checked, disabled, onChange }: Props) {
  if (zips === null) return <p className="muted">Looking for its exported ZIPs…</p>;
  if (!zips.length) return <p className="muted">It has no exported ZIP in the data folder's exports/.</p>;
  return (
    <label className="confirm__option">
      <input type="checkbox" checked={checked} disabled={disabled} onChange={(e) => onChange(e.target.checked)} />
      <span>
        Also delete its exported {zips.length === 1 ? 'ZIP' : 'ZIPs'}:{' '}
        {zips.map((z, i) => (
          <span key={z.path}>
            {i > 0 ? ', ' : ''}
            <span className="mono">exports/{z.name}</span> ({formatBytes(z.bytes)})
          </span>
        ))}
      </span>
    </label>
  );
}
