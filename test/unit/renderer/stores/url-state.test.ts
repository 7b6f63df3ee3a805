import { describe, expect, it } from 'vitest';

import { formatUrlState, parseUrlState } from '../../../../renderer/src/stores/url-state.js';

describe('url state', () => {
  it.each([
    ['', { page: 'system', runId: null, responseKey: null }],
    ['?page=models', { page: 'models', runId: null, responseKey: null }],
    ['?page=results&run=run-1', { page: 'results', runId: 'run-1', responseKey: null }],
    ['?page=results&run=run-1&response=1019', { page: 'results', runId: 'run-1', responseKey: 1019 }],
    // Unknown pages, hostile ids and keys are dropped, never passed on.
    ['?page=admin', { page: 'system', runId: null, responseKey: null }],
    ['?page=results&run=..%2F..%2Fetc', { page: 'results', runId: null, responseKey: null }],
    ['?page=results&run=run-1&response=-3', { page: 'results', runId: 'run-1', responseKey: null }],
    ['?page=results&run=run-1&response=1e400', { page: 'results', runId: 'run-1', responseKey: null }],
    ['?page=results&response=1000', { page: 'results', runId: null, responseKey: null }],
    // A run belongs to Results only.
    ['?page=history&run=run-1', { page: 'history', runId: null, responseKey: null }],
  ])('%s reads as %o', (search, expected) => {
    expect(parseUrlState(search)).toEqual(expected);
  });

  it.each([
    [{ page: 'system', runId: null, responseKey: null }, ''],
    [{ page: 'run', runId: 'run-1', responseKey: 5 }, '?page=run'],
    [{ page: 'results', runId: 'run-1', responseKey: null }, '?page=results&run=run-1'],
    [{ page: 'results', runId: 'run-1', responseKey: 0 }, '?page=results&run=run-1&response=0'],
  ] as const)('%o is written as %s and reads back', (state, search) => {
    expect(formatUrlState(state)).toBe(search);
    if (state.page !== 'run') expect(parseUrlState(search)).toEqual(state);
  });
});
