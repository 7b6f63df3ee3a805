import { describe, expect, it } from 'vitest';

import { appErrorCode, ServiceError, toResult } from '../../../../../electron/main/services/service-result.js';

const failing = (code: string, cause?: unknown) => (): never => {
  throw Object.assign(new Error(`${code}: something`, cause === undefined ? {} : { cause }), { code });
};

describe('toResult', () => {
  it('passes a value and a ServiceError through', async () => {
    expect(await toResult(() => 7)).toEqual({ ok: true, value: 7 });
    expect(await toResult(() => Promise.reject(new ServiceError('NOT_FOUND', 'run x not found')))).toEqual({
      ok: false,
      error: { code: 'NOT_FOUND', message: 'run x not found' },
    });
  });

  it.each([
    ['ENOSPC', 'DISK_FULL'],
    ['EDQUOT', 'DISK_FULL'],
    ['SQLITE_FULL', 'DISK_FULL'],
    ['EACCES', 'PERMISSION'],
    ['EPERM', 'PERMISSION'],
    ['EROFS', 'PERMISSION'],
    ['SQLITE_READONLY', 'PERMISSION'],
    ['SQLITE_READONLY_DBMOVED', 'PERMISSION'],
  ])('answers %s with %s', async (code, app) => {
    expect(await toResult(failing(code))).toEqual({ ok: false, error: { code: app, message: `${code}: something` } });
  });

  it.each(['ENOENT', 'EEXIST', 'SQLITE_BUSY', 'SQLITE_CONSTRAINT_PRIMARYKEY', 'ERR_INVALID_ARG_TYPE'])(
    'answers %s, no code of the app, with the fallback',
    async (code) => {
      expect(await toResult(failing(code))).toMatchObject({ ok: false, error: { code: 'INTERNAL' } });
      expect(await toResult(failing(code), 'BAD_INPUT')).toMatchObject({ ok: false, error: { code: 'BAD_INPUT' } });
    },
  );

  it('takes the code of the error a message wraps (a ZIP written to a full disk)', async () => {
    const enospc = Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });
    const wrapped = new Error('/x/r.zip: writing the result ZIP failed (ENOSPC: no space left on device, write)', { cause: enospc });
    expect(await toResult(() => Promise.reject(wrapped))).toEqual({ ok: false, error: { code: 'DISK_FULL', message: wrapped.message } });
    expect(appErrorCode(new Error('a', { cause: new Error('b', { cause: 'not an error' }) }), 'INTERNAL')).toBe('INTERNAL');
  });
});
