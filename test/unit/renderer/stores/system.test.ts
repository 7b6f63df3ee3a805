import { beforeEach, describe, expect, it } from 'vitest';

import { setTransport } from '../../../../renderer/src/api.js';
import { useSystem } from '../../../../renderer/src/stores/system.js';
import { inProcessTransport } from '../in-process-transport.js';

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
