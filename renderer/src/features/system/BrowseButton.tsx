import type { PickPathRequest } from '../../../../electron/common/ipc-contract.js';
import { Field } from '../../components/Field.js';
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

/**
 * The path of a ZIP on the machine running the services, typed or (in the desktop app) browsed for: `title` names the
 * field and the dialog ("Result ZIP"), `what` the thing chosen ("a result ZIP").
 */
export function ZipPathField({ title, what, value, onValue }: { title: string; what: string; value: string; onValue(path: string): void }) {
  return (
    <Field
      label={title}
      value={value}
      onValue={onValue}
      placeholder={`/path/to/${title.split(' ')[0]!.toLowerCase()}.zip`}
      className="field--mono field--grow"
      spellCheck={false}
      trailing={<BrowseButton what={what} request={{ kind: 'file', title, filters: [{ name: 'ZIP', extensions: ['zip'] }] }} onPath={onValue} />}
    />
  );
}
