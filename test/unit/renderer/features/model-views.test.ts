import { createElement, type FunctionComponent } from 'react';
import { renderToStaticMarkup } from 'react-dom/server';
import { describe, expect, it } from 'vitest';

import type { ModelDetails } from '../../../../electron/common/ipc-contract.js';

// Loaded by path: the Node-side type check has no JSX (as quality-card.test.ts does).
const detailsModule: string = '../../../../renderer/src/features/models/ModelDetailsView.js';
const prepareModule: string = '../../../../renderer/src/features/models/PrepareCard.js';
const { ModelDetailsView } = (await import(/* @vite-ignore */ detailsModule)) as { ModelDetailsView: FunctionComponent<{ details: ModelDetails }> };
const { DiskNote } = (await import(/* @vite-ignore */ prepareModule)) as {
  DiskNote: FunctionComponent<{ isDefault: boolean; free: number | null; dataDir: string | null }>;
};

const text = (el: ReturnType<typeof createElement>) =>
  renderToStaticMarkup(el).replace(/<[^>]+>/g, ' ').replace(/&#x27;/g, "'").replace(/\s+/g, ' ').trim();
const GiB = 2 ** 30;

describe('DiskNote', () => {
  it.each([
    // The default model: 13.84 GB (12.9 GiB) + 4.58 GB (4.3 GiB) = 18.42 GB (17.2 GiB).
    [true, 100 * GiB, /^Needs about 12\.9 GiB to download and 4\.3 GiB for the INT4 pack \(17\.2 GiB in all\); 100\.0 GiB free in \/data\.$/],
    [true, 10 * GiB, /; only 10\.0 GiB free in \/data: free some space first\.$/],
    [true, null, /\(17\.2 GiB in all\)\.$/],
    [false, 20 * GiB, /^20\.0 GiB free in \/data\. The download's size is checked against it once the repository answers\.$/],
  ])('default model %s with %s bytes free', (isDefault, free, expected) => {
    expect(text(createElement(DiskNote, { isDefault, free, dataDir: '/data' }))).toMatch(expected);
  });

  it('marks a shortfall', () => {
    expect(renderToStaticMarkup(createElement(DiskNote, { isDefault: true, free: GiB, dataDir: '/d' }))).toContain('disk-note--short');
    expect(renderToStaticMarkup(createElement(DiskNote, { isDefault: true, free: 100 * GiB, dataDir: '/d' }))).not.toContain('disk-note--short');
  });
});

describe('ModelDetailsView', () => {
  const base: ModelDetails = {
    id: 'o--m@abcdef0/int4-g32', repo: 'o/m', revision: 'abcdef0'.padEnd(40, '1'), revisionAsked: 'main', weights: 'int4',
    preparedDir: '/data/models/o--m/abc', dir: '/data/models/o--m/abc/int4-g32',
    files: [{ path: 'config.json', bytes: 900 }, { path: 'model-qpacked-00001-of-00001.safetensors', bytes: 3 * GiB }],
    totalBytes: 3 * GiB + 900, packScheme: { format: 'qpacked-v2', codebook: 'hq4nl', groupSize: 32, bitsPerWeight: 4.5 },
    hubUrl: 'https://huggingface.co', preparedAt: '2026-12-04T10:00:00Z', toolVersion: '0.1.0', problems: [],
  };

  it('names the folder, the revision asked for, the scheme and every file with its size', () => {
    const t = text(createElement(ModelDetailsView, { details: base }));
    expect(t).toContain('Folder /data/models/o--m/abc/int4-g32');
    expect(t).toContain('(asked for main)');
    expect(t).toContain('INT4 experts (qpacked-v2, hq4nl codebook, group 32: 4.5 bits a weight) + FP16 rest');
    expect(t).toContain('model-qpacked-00001-of-00001.safetensors 3.0 GiB');
    expect(t).toContain('in 2 files');
  });

  it('says what does not match, and a BF16 checkpoint as such', () => {
    const t = text(createElement(ModelDetailsView, { details: { ...base, weights: 'bf16', packScheme: null, revisionAsked: base.revision, problems: ['source/x: missing'] } }));
    expect(t).toContain('BF16 checkpoint, as on the Hub');
    expect(t).toContain('Does not match prepared.json: source/x: missing');
    expect(t).not.toContain('asked for');
  });
});
