import type { PickPathRequest } from '../../../../electron/common/ipc-contract.js';
import { useSystem } from '../../stores/system.js';

interface Props {
  /** What is being chosen, for the accessible name "Browse for …". */
  what: string;
  request: PickPathRequest;
  onPath(path: string): void;
}

/** "Browse…" beside a path field: the desktop app's file dialog. Renders nothing in a browser, where paths are typed. */
export function BrowseButton({ what, request, onPath }: Props) {
  const nativeDialogs = useSystem((s) => s.info?.nativeDialogs ?? false);
  const pickPath = useSystem((s) => s.pickPath);
  if (!nativeDialogs) return null;
  return (
    <button
      type="button"
      className="btn"
      aria-label={`Browse for ${what}`}
      onClick={() =>
        void pickPath(request).then((p) => {
          if (p) onPath(p);
        })
      }
    >
      Browse…
    </button>
  );
}
