import { onConnection, onEvent } from '../api.js';
import { useConnection } from './connection.js';
import { useHistory } from './history.js';
import { useModels } from './models.js';
import { usePerf } from './perf.js';
import { useResults } from './results.js';
import { useRuns } from './runs.js';

/** After a reconnection: the live run, the run list, the open results and the models as the services have them now. */
async function refreshAll(): Promise<void> {
  const runs = useRuns.getState();
  await Promise.all([
    runs.run ? runs.refresh() : runs.attachActive(),
    useHistory.getState().refresh(),
    useResults.getState().reload(),
    useModels.getState().refresh(),
  ]);
}

/** Routes service events into the stores; returns the function that unsubscribes them all. */
export function connectEvents(): () => void {
  let reloadTimer: ReturnType<typeof setTimeout> | null = null;
  const offs = [
    onEvent('models:onDidProgress', (p) => useModels.getState().handleProgress(p)),
    onEvent('runs:onDidProgress', (p) => {
      useRuns.getState().handleProgress(p);
      if (!reloadTimer) {
        // The run list (the Results picker, History) and the results of a live run refresh at most twice a second.
        reloadTimer = setTimeout(() => {
          reloadTimer = null;
          void useHistory.getState().refresh();
          if (useResults.getState().runId === p.runId) void useResults.getState().reload();
        }, 500);
      }
    }),
    onEvent('runs:onDidResponse', (e) => useRuns.getState().handleResponse(e.runId, e.row)),
    onEvent('runs:onDidDelete', (e) => useHistory.getState().handleDeleted(e.runId)),
    // A run imported in another window, or by `horizon import`: the run lists show it.
    onEvent('runs:onDidImport', () => void useHistory.getState().refresh()),
    onEvent('runs:onDidLabel', (e) => useHistory.getState().handleLabelled(e.runId, e.label)),
    onEvent('perf:onDidProgress', (p) => usePerf.getState().handleProgress(p)),
    onEvent('perf:onDidImport', () => void usePerf.getState().refresh()),
    onEvent('perf:onDidDelete', (e) => usePerf.getState().handleDeleted(e.campaignId)),
    onEvent('perf:onDidLabel', (e) => usePerf.getState().handleLabelled(e.campaignId, e.label)),
    onConnection((up) => {
      useConnection.getState().set(up);
      // Events were missed while it was away: everything shown is read again.
      if (up) void refreshAll();
    }),
  ];
  return () => {
    for (const off of offs) off();
    if (reloadTimer) clearTimeout(reloadTimer);
  };
}
