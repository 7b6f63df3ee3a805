import { describe, expect, it } from 'vitest';

import { CHANNELS, isChannel, validateRequest } from '../../../../electron/common/ipc-validators.js';

describe('validateRequest', () => {
  it('accepts well-formed payloads and returns them', () => {
    const r = validateRequest('runs:start', { modelId: 'org--m@abc/int4', limit: 10, maxNewTokens: 64, cudaDevice: 1 });
    expect(r).toEqual({ ok: true, value: { modelId: 'org--m@abc/int4', limit: 10, maxNewTokens: 64, cudaDevice: 1 } });
    const q = { runId: 'r', finish: 'length', verdict: 'fail', mode: 'strict' };
    expect(validateRequest('runs:responses', q)).toEqual({ ok: true, value: q });
  });

  it.each([
    ['runs:start', { modelId: '' }, 'request.modelId must not be empty'],
    ['runs:start', { modelId: 'm', limit: 0 }, 'request.limit must be between 1 and 541'],
    ['runs:start', { modelId: 'm', limit: 2.5 }, 'request.limit must be an integer'],
    ['runs:start', { modelId: 'm', batch: '4' }, 'request.batch must be an integer'],
    ['runs:start', { modelId: 'm', expertBudgetMiB: 100 }, 'request.expertBudgetMiB must be between 256 and 1048576'],
    ['runs:start', { modelId: 'm', cudaDevice: -1 }, 'request.cudaDevice must be between 0 and 63'],
    ['runs:start', { modelId: 'm', cudaDevice: '1' }, 'request.cudaDevice must be an integer'],
    ['system:pickPath', { kind: 'save', title: 'x' }, 'request.kind must be one of'],
    ['system:pickPath', { kind: 'file', title: '' }, 'request.title must not be empty'],
    ['system:pickPath', { kind: 'file', title: 'x', filters: [{ name: 'ZIP', extensions: ['.zip'] }] }, 'request.filters[0].extensions[0]'],
    ['runs:start', { modelId: 'm', extra: 1 }, 'request.extra is not an allowed field'],
    ['runs:start', { modelId: 'm', toString: 1 }, 'request.toString is not an allowed field'],
    ['runs:start', JSON.parse('{"modelId":"m","__proto__":{"limit":1}}'), 'request.__proto__ is not an allowed field'],
    ['runs:start', null, 'request must be an object'],
    ['runs:responses', { runId: 'r', verdict: 'maybe' }, 'request.verdict must be one of pass, fail'],
    ['runs:responses', { runId: 'r', limit: 500 }, 'request.limit must be between 1 and 200'],
    ['runs:responses', { runId: 'r', finish: 'eos' }, 'request.finish must be one of stop, length, cancelled'],
    ['runs:response', { runId: 'r', key: -1 }, 'request.key must be between 0'],
    ['models:prepare', { repo: 'no-slash', revision: 'main' }, 'request.repo has an invalid format'],
    ['models:prepare', { repo: 'a/b', revision: 'main', pack: 'yes' }, 'request.pack must be true or false'],
    ['models:importAssets', { kind: 'weights', path: '/x' }, 'request.kind must be one of ifeval, punkt'],
    ['models:downloadAssets', { kinds: ['ifeval', 'x'] }, 'request.kinds[1] must be one of ifeval, punkt'],
    ['runs:get', { runId: '../../etc' }, 'request.runId has an invalid format'],
    ['system:check', { anything: 1 }, 'request must be empty'],
    ['runs:delete', { runId: '../../etc' }, 'request.runId has an invalid format'],
    ['runs:delete', { runId: 'r1', deleteExport: 'yes' }, 'request.deleteExport must be true or false'],
    ['runs:delete', { runId: 'r1', path: '/tmp/x.zip' }, 'request.path is not an allowed field'],
    ['runs:delete', {}, 'request.runId must be a string'],
    ['export:listZips', { runId: 'a/../../b' }, 'request.runId has an invalid format'],
    ['export:importRun', {}, 'request.path must be a string'],
    ['perf:importZip', { path: 7 }, 'request.path must be a string'],
    ['perf:delete', { campaignId: '../../etc' }, 'request.campaignId has an invalid format'],
    ['perf:delete', { campaignId: 'p1', deleteExport: 1 }, 'request.deleteExport must be true or false'],
    ['perf:delete', { campaignId: 'p1', path: '/tmp/x.zip' }, 'request.path is not an allowed field'],
    ['perf:listZips', { campaignId: 'perf-1/../x' }, 'request.campaignId has an invalid format'],
    ['export:importRun', { path: '' }, 'request.path must not be empty'],
    ['export:importRun', { path: '/z/run.zip', runId: 'r1' }, 'request.runId is not an allowed field'],
  ] as const)('%s rejects %j', (channel, payload, message) => {
    const r = validateRequest(channel, payload);
    expect(r.ok).toBe(false);
    if (!r.ok) {
      expect(r.error.code).toBe('BAD_INPUT');
      expect(r.error.message).toContain(`${channel}: ${message}`);
    }
  });

  it('accepts a deletion with or without its ZIPs', () => {
    expect(validateRequest('runs:delete', { runId: '20261202T174512-9fe751' })).toEqual({ ok: true, value: { runId: '20261202T174512-9fe751' } });
    expect(validateRequest('runs:delete', { runId: 'r1', deleteExport: true }).ok).toBe(true);
    expect(validateRequest('export:listZips', { runId: 'r1' }).ok).toBe(true);
    expect(validateRequest('perf:delete', { campaignId: 'perf-1', deleteExport: true })).toEqual({ ok: true, value: { campaignId: 'perf-1', deleteExport: true } });
    expect(validateRequest('perf:listZips', { campaignId: 'perf-1' }).ok).toBe(true);
    expect(validateRequest('export:importRun', { path: '/z/run.zip' })).toEqual({ ok: true, value: { path: '/z/run.zip' } });
  });

  it('treats undefined optional fields as absent', () => {
    expect(validateRequest('export:exportRun', { runId: 'r1', path: undefined }).ok).toBe(true);
  });

  it('normalises empty requests from JSON transports to undefined', () => {
    expect(validateRequest('runs:list', {})).toEqual({ ok: true, value: undefined });
    expect(validateRequest('runs:list', null)).toEqual({ ok: true, value: undefined });
  });

  it('lists every channel once, service:method shaped', () => {
    expect(new Set(CHANNELS).size).toBe(CHANNELS.length);
    for (const c of CHANNELS) expect(c).toMatch(/^(system|models|runs|export|perf):[a-zA-Z]+$/);
    expect(CHANNELS).toContain('runs:compare');
    expect(CHANNELS).toEqual(expect.arrayContaining(['runs:delete', 'export:listZips', 'perf:start', 'models:delete']));
    expect(isChannel('runs:compare')).toBe(true);
    expect(isChannel('runs:__proto__')).toBe(false);
    expect(isChannel('toString')).toBe(false);
  });
});
