import { useState } from 'react';

import type { Transport } from '../../api.js';

interface Props {
  readonly path: string;
  readonly download: NonNullable<Transport['download']>;
}

/** Downloads an exported ZIP through the browser (`horizon serve`): says so while it fetches, and why it failed. */
export function DownloadButton({ path, download }: Props) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  return (
    <>
      <button
        type="button"
        className="link"
        aria-disabled={busy}
        onClick={() => {
          if (busy) return;
          setBusy(true);
          setError(null);
          void download(path).then((r) => {
            setBusy(false);
            if (!r.ok) setError(r.error.message);
          });
        }}
      >
        {busy ? 'Downloading…' : 'Download'}
      </button>
      {error ? (
        <span role="alert" className="error-text">
          {' '}
          {error}
        </span>
      ) : null}
    </>
  );
}
