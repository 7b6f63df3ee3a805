import { describe, expect, it } from 'vitest';

import { isLiveStatus, type RunStatus } from '../../../../electron/common/ipc-contract.js';

describe('isLiveStatus', () => {
  it('is true for a queued or running run and false once it has stopped', () => {
    const all: Record<RunStatus, boolean> = { queued: true, running: true, cancelled: false, failed: false, completed: false };
    for (const [status, live] of Object.entries(all) as [RunStatus, boolean][]) expect(isLiveStatus(status), status).toBe(live);
  });
});
