import { describe, expect, it } from 'vitest';

import { RunClock } from '../../../../../electron/main/jobs/run-clock.js';

describe('RunClock', () => {
  it("adds this session's generating time to what earlier sessions stored, and ends on what it stored", () => {
    let t = 1000;
    const clock = new RunClock(4000, () => t);
    expect(clock.elapsedSeconds()).toBe(4);
    expect([clock.started, clock.generatingSeconds(), clock.tokensPerSecond(), clock.unstoredMs()]).toEqual([false, null, null, 0]);
    clock.start();
    t += 500;
    for (let i = 0; i < 10; i++) clock.countToken();
    expect(clock.elapsedSeconds()).toBe(4.5);
    expect(clock.tokensPerSecond()).toBe(20);
    // A response stored now carries the 500 ms since generating began; the next, only the time after it.
    expect(clock.unstoredMs()).toBe(500);
    clock.markStored(500);
    t += 200;
    expect(clock.unstoredMs()).toBe(200);
    // The worker's wall time for the job, less what the responses already stored.
    expect(clock.unstoredOf(900)).toBe(400);
    expect(clock.takeUnstoredMs()).toBe(200);
    expect(clock.unstoredMs()).toBe(0);
    // Ended: the session is what the run stored in all (5,000 ms, 1,000 of it this session), whatever the time now.
    clock.end(5000);
    t += 10_000;
    expect(clock.elapsedSeconds()).toBe(5);
    expect(clock.tokensPerSecond()).toBe(10);
    expect(clock.generatingSeconds()).toBe(10.7);
  });

  it('never counts stored time twice, nor a negative remainder', () => {
    let t = 0;
    const clock = new RunClock(0, () => t);
    clock.start();
    t = 100;
    clock.markStored(150);
    expect(clock.unstoredMs()).toBe(0);
    expect(clock.unstoredOf(120)).toBe(0);
    clock.end(-5);
    expect(clock.elapsedSeconds()).toBe(0);
  });
});
