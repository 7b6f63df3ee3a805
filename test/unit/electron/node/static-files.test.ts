import path from 'node:path';

import { describe, expect, it } from 'vitest';

import { contentTypeFor, insideFolder } from '../../../../electron/node/static-files.js';

describe('contentTypeFor', () => {
  it.each([
    ['index.html', 'text/html; charset=utf-8'],
    ['assets/app.JS', 'text/javascript; charset=utf-8'],
    ['RESULT.ZIP', 'application/zip'],
    ['font.woff2', 'font/woff2'],
    ['notes.txt', 'application/octet-stream'],
    ['Makefile', 'application/octet-stream'],
  ])('%s -> %s', (file, type) => {
    expect(contentTypeFor(file)).toBe(type);
  });
});

describe('insideFolder', () => {
  const root = path.resolve('/srv/renderer');
  it.each([
    ['', root],
    ['/', root],
    ['index.html', path.join(root, 'index.html')],
    ['/assets/app.js', path.join(root, 'assets', 'app.js')],
    // A URL path cannot climb out: it is normalised as rooted at the folder.
    ['../../etc/passwd', path.join(root, 'etc', 'passwd')],
    ['/assets/../../secret', path.join(root, 'secret')],
  ])('%j -> %j', (rel, full) => {
    expect(insideFolder(root, rel)).toBe(full);
  });

  it('takes a root with a trailing separator or dots as the same folder', () => {
    for (const spelled of [root + path.sep, path.join(root, 'assets', '..') + path.sep]) {
      expect(insideFolder(spelled, 'index.html')).toBe(path.join(root, 'index.html'));
      expect(insideFolder(spelled, '')).toBe(root);
    }
  });
});
