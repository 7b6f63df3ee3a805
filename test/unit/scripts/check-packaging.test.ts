import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { describe, expect, it } from 'vitest';

import { configuredFuses } from '../../../scripts/check-packaging.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..');

describe('configuredFuses (check-packaging)', () => {
  it("reads electron-builder.yml's fuses", () => {
    expect(configuredFuses(readFileSync(path.join(root, 'electron-builder.yml'), 'utf8'))).toEqual({
      runAsNode: false,
      enableCookieEncryption: true,
      enableNodeOptionsEnvironmentVariable: false,
      enableNodeCliInspectArguments: false,
      enableEmbeddedAsarIntegrityValidation: true,
      onlyLoadAppFromAsar: true,
      grantFileProtocolExtraPrivileges: false,
    });
  });

  it('reads a block with comments and CRLF line ends (a Windows checkout)', () => {
    const yml = 'asar: true\r\nelectronFuses:\r\n  # why\r\n  runAsNode: true  # the packer child\r\n\r\n  onlyLoadAppFromAsar: false\r\nwin:\r\n  x: 1\r\n';
    expect(configuredFuses(yml)).toEqual({ runAsNode: true, onlyLoadAppFromAsar: false });
  });

  it('refuses a fuse line it cannot read rather than leave that fuse unchecked', () => {
    expect(() => configuredFuses('electronFuses:\n  runAsNode: yes\n  onlyLoadAppFromAsar: true\n')).toThrow(/runAsNode: yes/);
    expect(() => configuredFuses('asar: true\n')).toThrow(/no electronFuses block/);
  });
});
