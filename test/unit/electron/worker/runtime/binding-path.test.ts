/** Which addon file the binding loads: the HORIZON_NATIVE_ADDON override, or the build output. */
import path from 'node:path';

import { describe, expect, it } from 'vitest';

import { resolveAddonPath } from '../../../../../electron/worker/runtime/binding.js';

const built = (p: string) => p.endsWith(path.join('native', 'build', 'Release', 'horizon_runtime.node'));

describe('resolveAddonPath', () => {
  it.each([
    ['the override when it exists', '/opt/x/horizon_runtime_sim.node', (p: string) => p === '/opt/x/horizon_runtime_sim.node', /sim\.node$/],
    ['the build output without an override', undefined, built, /native[\\/]build[\\/]Release[\\/]horizon_runtime\.node$/],
  ])('loads %s', (_name, env, exists, want) => {
    expect(resolveAddonPath(env, exists)).toMatch(want);
  });

  it.each([
    ['an override that does not exist, even with a build present', '/nope/a.node', built, /HORIZON_NATIVE_ADDON names \/nope\/a\.node, which does not exist/],
    ['no build and no override', undefined, () => false, /native runtime is not built .*npm run build:native/],
  ])('refuses %s', (_name, env, exists, message) => {
    expect(() => resolveAddonPath(env, exists)).toThrow(message);
  });
});
