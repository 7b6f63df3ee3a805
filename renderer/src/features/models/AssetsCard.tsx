import type { AssetKind, AssetStatus, PickPathRequest } from '../../../../electron/common/ipc-contract.js';
import { Card } from '../../components/Card.js';
import { Field } from '../../components/Field.js';
import { Notice } from '../../components/Notice.js';
import { useModels } from '../../stores/models.js';
import { useSystem } from '../../stores/system.js';
import { BrowseButton } from '../system/BrowseButton.js';
import { StepProgress } from './StepProgress.js';

const KINDS: readonly { kind: AssetKind; label: string; hint: string; pick: PickPathRequest }[] = [
  {
    kind: 'ifeval',
    label: 'IFEval input data',
    hint: 'Path to input_data.jsonl (541 prompts).',
    pick: { kind: 'file', title: 'IFEval input_data.jsonl', filters: [{ name: 'JSON Lines', extensions: ['jsonl'] }] },
  },
  {
    kind: 'punkt',
    label: 'Punkt English',
    hint: 'Path to a punkt_english folder or the punkt_tab zip.',
    pick: { kind: 'folder', title: 'Punkt English parameters folder' },
  },
];

const NO_ASSETS: readonly AssetStatus[] = [];

export function AssetsCard() {
  const assets = useSystem((s) => s.info?.assets ?? NO_ASSETS);
  const paths = useModels((s) => s.importPaths);
  const messages = useModels((s) => s.assetMessage);
  const job = useModels((s) => s.assetsJob);
  const setPath = useModels((s) => s.setImportPath);
  const importAsset = useModels((s) => s.importAsset);
  const download = useModels((s) => s.downloadAssets);
  const allReady = KINDS.every(({ kind }) => assets.find((a) => a.kind === kind)?.ready);

  return (
    <Card
      title="Evaluation assets"
      subtitle="Download the pinned files, or import copies you already have. Both are checked against their sha256."
      actions={
        <button
          type="button"
          className="btn"
          onClick={() => void download()}
          disabled={job?.status === 'running' || allReady}
          title={allReady ? 'Both assets are present and verified.' : undefined}
        >
          Download missing
        </button>
      }
      testId="assets-card"
    >
      {job ? <StepProgress label="Assets" progress={job.steps.assets} /> : null}
      {job?.error ? <Notice tone="error">{job.error}</Notice> : null}
      <div className="asset-list">
        {KINDS.map(({ kind, label, hint, pick }) => {
          const status = assets.find((a) => a.kind === kind);
          const msg = messages[kind];
          return (
            <form
              key={kind}
              className="asset"
              data-testid={`import-${kind}`}
              onSubmit={(e) => {
                e.preventDefault();
                void importAsset(kind);
              }}
            >
              <div className="asset__head">
                <span className="asset__name">{label}</span>
                <span className={`chip ${status?.ready ? 'chip--ok' : 'chip--muted'}`}>
                  {status?.ready ? 'ready' : 'missing'}
                </span>
              </div>
              <div className="asset__row">
                <Field
                  label={`Import ${label} from`}
                  value={paths[kind]}
                  onValue={(p) => setPath(kind, p)}
                  placeholder={kind === 'ifeval' ? '/path/to/input_data.jsonl' : '/path/to/punkt_english'}
                  className="field--mono field--grow"
                  hint={hint}
                  spellCheck={false}
                  trailing={<BrowseButton what={label} request={pick} onPath={(p) => setPath(kind, p)} />}
                />
                <button type="submit" className="btn">
                  Import
                </button>
              </div>
              {msg ? <Notice tone={msg.ok ? 'ok' : 'error'}>{msg.text}</Notice> : null}
            </form>
          );
        })}
      </div>
    </Card>
  );
}
