import { beforeEach, describe, expect, it } from 'vitest';

import { setTransport } from '../../../../renderer/src/api.js';
import { useHistory } from '../../../../renderer/src/stores/history.js';
import { inProcessTransport } from '../in-process-transport.js';

describe('history store', () => {
  beforeEach(() =>
    useHistory.setState({ runs: [], selected: [], comparison: null, error: null, zipPath: '', verifyReport: null, verifyError: null }),
  );

  it('verifies a ZIP by path and asks for one when empty', async () => {
    const t = inProcessTransport();
    setTransport(t.transport);
    await useHistory.getState().verifyZip();
    expect(useHistory.getState().verifyError).toBe('Enter the path of a result ZIP.');
    useHistory.getState().setZipPath(' /tmp/not-a-result.zip ');
    await useHistory.getState().verifyZip();
    expect(t.calls.at(-1)).toEqual({ channel: 'export:verify', payload: { path: '/tmp/not-a-result.zip' } });
    expect(useHistory.getState().verifyReport).toEqual({
      verified: false,
      problems: ['/tmp/not-a-result.zip: not a result ZIP'],
      accuracies: null,
    });
  });

  it('keeps at most two selections, oldest dropped, toggling off', () => {
    const { toggle } = useHistory.getState();
    toggle('a');
    toggle('b');
    expect(useHistory.getState().selected).toEqual(['a', 'b']);
    toggle('c');
    expect(useHistory.getState().selected).toEqual(['b', 'c']);
    toggle('b');
    expect(useHistory.getState().selected).toEqual(['c']);
  });

  it('needs two runs to compare and reports service errors', async () => {
    const t = inProcessTransport();
    setTransport(t.transport);
    await useHistory.getState().compare();
    expect(useHistory.getState().error).toBe('Pick two runs to compare.');
    expect(t.calls).toEqual([]);
    useHistory.getState().toggle('x');
    useHistory.getState().toggle('y');
    await useHistory.getState().compare();
    expect(t.calls.at(-1)).toEqual({ channel: 'runs:compare', payload: { runA: 'x', runB: 'y' } });
    expect(useHistory.getState().error).toBe("runs:compare: no run 'x'");
  });
});
