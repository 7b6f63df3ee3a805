import type { ModelDetails } from '../../../../electron/common/ipc-contract.js';
import { formatBytes, formatDate } from '../../components/format.js';
import { Notice } from '../../components/Notice.js';

/** A prepared variant's facts: where it is, how it was made, and every file with its size. */
export function ModelDetailsView({ details: d }: { details: ModelDetails }) {
  return (
    <div className="model-details" data-testid="model-details">
      <dl className="facts">
        <dt>Folder</dt>
        <dd className="mono">{d.dir}</dd>
        <dt>Prepared folder</dt>
        <dd className="mono">{d.preparedDir}</dd>
        <dt>Revision</dt>
        <dd>
          <span className="mono">{d.revision}</span>
          {d.revisionAsked !== d.revision ? <span className="muted"> (asked for {d.revisionAsked})</span> : null}
        </dd>
        <dt>Weights</dt>
        <dd>
          {d.packScheme
            ? `INT4 experts (${d.packScheme.format}, ${d.packScheme.codebook} codebook, group ${d.packScheme.groupSize}: ${d.packScheme.bitsPerWeight} bits a weight) + FP16 rest`
            : 'BF16 checkpoint, as on the Hub'}
        </dd>
        <dt>From</dt>
        <dd className="mono">{d.hubUrl}</dd>
        <dt>Prepared</dt>
        <dd>
          {formatDate(d.preparedAt)} by Horizon RunMap {d.toolVersion}
        </dd>
        <dt>Size</dt>
        <dd>
          {formatBytes(d.totalBytes)} in {d.files.length} {d.files.length === 1 ? 'file' : 'files'}
        </dd>
      </dl>
      {d.problems.length ? (
        <Notice tone="error">
          Does not match prepared.json:
          <ul>
            {d.problems.map((p) => (
              <li key={p}>{p}</li>
            ))}
          </ul>
        </Notice>
      ) : null}
      <table className="table table--compact">
        <thead>
          <tr>
            <th scope="col">File</th>
            <th scope="col" className="num">
              Size
            </th>
          </tr>
        </thead>
        <tbody>
          {d.files.map((f) => (
            <tr key={f.path}>
              <td className="mono break">{f.path}</td>
              <td className="num nowrap">{formatBytes(f.bytes)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
