import path from 'node:path';

import { beforeEach, describe, expect, it } from 'vitest';

import type { AssetKind, AssetStatus } from '../../../../electron/common/ipc-contract.js';
import { setTransport } from '../../../../renderer/src/api.js';
import { useSystem } from '../../../../renderer/src/stores/system.js';
import { holdReplies, inProcessTransport, shared } from '../in-process-transport.js';

/** The fake services with each system check's reply (as read when asked) held until released: real checks are slow. */
function heldChecks() {
  const t = inProcessTransport();
  return { ...t, held: holdReplies(t, 'system:check') };
}

const asset = (kind: AssetKind) => useSystem.getState().info?.assets.find((a) => a.kind === kind);
const punktReady: AssetStatus = { kind: 'punkt', ready: true, path: '/tmp/horizon-fake/assets/nltk/punkt_english', detail: 'Punkt English, sha256 ok' };

describe('system store: file dialogs', () => {
  beforeEach(() => useSystem.setState({ info: null, error: null, loading: false }));

  it('returns the chosen path, or null when the dialog is cancelled', async () => {
    setTransport(inProcessTransport(5, { 'Result ZIP': '/home/me/run.zip' }).transport);
    await useSystem.getState().refresh();
    expect(useSystem.getState().info?.nativeDialogs).toBe(true);
    expect(await useSystem.getState().pickPath({ kind: 'file', title: 'Result ZIP' })).toBe('/home/me/run.zip');
    expect(await useSystem.getState().pickPath({ kind: 'folder', title: 'Something else' })).toBeNull();
    expect(useSystem.getState().error).toBeNull();
  });

  it('reports why there is no dialog in a browser', async () => {
    const t = inProcessTransport();
    setTransport(t.transport);
    await useSystem.getState().refresh();
    expect(useSystem.getState().info?.nativeDialogs).toBe(false);
    expect(await useSystem.getState().pickPath({ kind: 'file', title: 'Result ZIP' })).toBeNull();
    expect(useSystem.getState().error).toBe('no file dialogs in this fake');
    expect(t.calls.at(-1)).toEqual({ channel: 'system:pickPath', payload: { kind: 'file', title: 'Result ZIP' } });
  });
});

describe('system store: checks', () => {
  beforeEach(() => useSystem.setState({ info: null, error: null, loading: false }));

  it('shows the newest check when an older one answers last', async () => {
    const { api, held } = heldChecks();
    const older = useSystem.getState().refresh();
    await expect.poll(() => held.length).toBe(1);
    // Imported elsewhere (another window) between the two checks.
    expect((await api.models.importAssets({ kind: 'punkt', path: path.join(shared, 'nltk', 'punkt_english') })).ok).toBe(true);
    const newer = useSystem.getState().refresh();
    await expect.poll(() => held.length).toBe(2);
    held[1]!();
    await newer;
    expect(asset('punkt')?.ready).toBe(true);
    held[0]!();
    await older;
    expect(asset('punkt')?.ready).toBe(true);
    expect(useSystem.getState().loading).toBe(false);
  });

  it("keeps an asset applied while a check is on its way over that check's view, and not over a later check's", async () => {
    const { held } = heldChecks();
    const first = useSystem.getState().refresh();
    await expect.poll(() => held.length).toBe(1);
    held[0]!();
    await first;
    expect(asset('punkt')?.ready).toBe(false);

    const during = useSystem.getState().refresh();
    await expect.poll(() => held.length).toBe(2);
    useSystem.getState().applyAsset(punktReady);
    expect(asset('punkt')).toEqual(punktReady);
    held[1]!();
    await during;
    expect(asset('punkt')).toEqual(punktReady);

    // A check asked for after it was applied knows better (here: the services never had it, as if deleted since).
    const after = useSystem.getState().refresh();
    await expect.poll(() => held.length).toBe(3);
    held[2]!();
    await after;
    expect(asset('punkt')?.ready).toBe(false);
  });

  it('applies an asset to the check shown, leaving the others as they are, and adds one the check did not list', async () => {
    setTransport(inProcessTransport().transport);
    await useSystem.getState().refresh();
    const info = useSystem.getState().info!;
    const ifeval = info.assets.find((a) => a.kind === 'ifeval')!;
    useSystem.setState({ info: { ...info, assets: [ifeval] } });
    useSystem.getState().applyAsset(punktReady);
    expect(useSystem.getState().info?.assets).toEqual([ifeval, punktReady]);
    const ifevalReady: AssetStatus = { ...ifeval, ready: true, detail: '541 prompts, sha256 ok' };
    useSystem.getState().applyAsset(ifevalReady);
    expect(useSystem.getState().info?.assets).toEqual([ifevalReady, punktReady]);
    expect(useSystem.getState().info).toMatchObject({ backendLabel: info.backendLabel, dataDir: info.dataDir });
  });

  it('says why a check failed, then clears the error once a check succeeds', async () => {
    const t = inProcessTransport();
    let failing = true;
    setTransport({
      ...t.transport,
      invoke: (async (channel: string, payload: unknown) =>
        failing && channel === 'system:check'
          ? { ok: false, error: { code: 'INTERNAL', message: 'system:check: probe crashed' } }
          : (t.transport.invoke as (c: string, p: unknown) => Promise<unknown>)(channel, payload)) as typeof t.transport.invoke,
    });
    await useSystem.getState().refresh();
    expect(useSystem.getState()).toMatchObject({ info: null, loading: false, error: 'system:check: probe crashed' });
    failing = false;
    const checking = useSystem.getState().refresh();
    expect(useSystem.getState()).toMatchObject({ loading: true, error: null });
    await checking;
    expect(useSystem.getState()).toMatchObject({ loading: false, error: null });
    expect(useSystem.getState().info?.backend).toBe('cpu');
  });
});
