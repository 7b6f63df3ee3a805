import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterAll, describe, expect, it } from 'vitest';

import { qualitySummary } from '../../../../../electron/common/quality-summary.js';
import { qualityReportFile, readPackQuality, readQualityReport, recordedPackManifestSha256, writeQualityReport } from '../../../../../electron/main/prep/quality-report.js';
import type { StoredQualityReport } from '../../../../../electron/main/prep/quality-report.js';

const dir = mkdtempSync(join(tmpdir(), 'horizon-quality-report-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const report: StoredQualityReport = {
  format: 'horizon-quality-v1', createdAt: '2026-12-07T10:00:00Z', int4Dir: 'int4-g32', backend: 'cpu', limit: 2, maxNewTokens: 8,
  prompts: 2, positions: 16, top1Agreement: 0.875, meanKl: 0.01, p99Kl: 0.1, meanAbsLogitDiff: 0.02, promptsWithoutDivergence: 1,
  medianFirstDivergence: 3, q4_0: { activations: 'q8_0', top1Agreement: 0.8125, meanKl: 0.02, p99Kl: 0.2, meanAbsLogitDiff: 0.03, meanKlRatioCi95: [0.4, 0.6], promptsInt4Closer: 2, promptsQ4_0Closer: 0, signTestP: 0.5 }, perPrompt: [],
};

describe('stored quality reports', () => {
  it('live beside the model, named after the INT4 folder, and read back as written', async () => {
    const file = qualityReportFile(dir, join(dir, 'int4-g32'));
    expect(file).toBe(join(dir, 'quality-int4-g32.json'));
    await writeQualityReport(file, report);
    expect(await readQualityReport(file)).toEqual(report);
  });

  it('read a report from before the Q4_0 comparison with none, and refuse a broken one', async () => {
    const file = join(dir, 'older.json');
    const { q4_0: _, ...older } = report;
    writeFileSync(file, JSON.stringify(older));
    expect(await readQualityReport(file)).toEqual({ ...older, q4_0: null });
    // A comparison from before the check rounded Q4_0's inputs: float ones.
    const { activations: ___, ...floatInputs } = report.q4_0!;
    writeFileSync(file, JSON.stringify({ ...report, q4_0: floatInputs }));
    expect((await readQualityReport(file))!.q4_0).toEqual({ ...floatInputs, activations: 'float' });
    expect(qualitySummary((await readQualityReport(file))!)).toContain("; llama.cpp's Q4_0 (float inputs): 81.25%");
    // A comparison without its interval keeps its figures, the interval null.
    const { meanKlRatioCi95: __, ...noInterval } = report.q4_0!;
    writeFileSync(file, JSON.stringify({ ...report, q4_0: noInterval }));
    expect((await readQualityReport(file))!.q4_0).toEqual({ ...noInterval, meanKlRatioCi95: null });
    const { promptsInt4Closer: _a, promptsQ4_0Closer: _b, signTestP: _c, ...noCounts } = report.q4_0!;
    writeFileSync(file, JSON.stringify({ ...report, q4_0: noCounts }));
    expect((await readQualityReport(file))!.q4_0).toEqual({ ...noCounts, promptsInt4Closer: null, promptsQ4_0Closer: null, signTestP: null });
    writeFileSync(file, JSON.stringify({ ...report, q4_0: { top1Agreement: 0.5, meanKl: '0.1' } }));
    expect(await readQualityReport(file)).toBeNull();
    writeFileSync(file, JSON.stringify({ ...report, format: 'horizon-quality-v0' }));
    expect(await readQualityReport(file)).toBeNull();
    writeFileSync(file, '{');
    expect(await readQualityReport(file)).toBeNull();
    expect(await readQualityReport(join(dir, 'missing.json'))).toBeNull();
  });

  it("find the pack manifest's sha256 a run's model manifest recorded, prepared or local", () => {
    const file = (p: string, sha256: string) => ({ path: p, size: 1, sha256 });
    const prepared = { format: 'horizon-prepared-v1', pack: { dir: 'int4-g32', files: [file('config.json', 'a'.repeat(64)), file('horizon-manifest.json', 'b'.repeat(64))] } };
    expect(recordedPackManifestSha256(prepared, 'int4-g32')).toBe('b'.repeat(64));
    expect(recordedPackManifestSha256(prepared, 'int4-g64')).toBeNull();
    expect(recordedPackManifestSha256({ ...prepared, pack: null }, 'int4-g32')).toBeNull();
    const local = { format: 'horizon-local-v1', dir: '/m/tiny', files: [file('horizon-manifest.json', 'c'.repeat(64)), file('int4-g32/horizon-manifest.json', 'd'.repeat(64))] };
    expect(recordedPackManifestSha256(local, 'int4-g32')).toBe('d'.repeat(64));
    // A local folder that is the pack itself.
    expect(recordedPackManifestSha256({ ...local, dir: '/m/int4-g64' }, 'int4-g64')).toBe('c'.repeat(64));
    expect(recordedPackManifestSha256({ ...local, dir: 'C:\\models\\int4-g64' }, 'int4-g64')).toBe('c'.repeat(64));
    expect(recordedPackManifestSha256(local, 'int4-g64')).toBeNull();
    expect(recordedPackManifestSha256('{"files":[]}', 'int4-g32')).toBeNull();
  });

  it('sum up in one line, with Q4_0 beside INT4 when the check ran it', () => {
    expect(qualitySummary(report)).toBe(
      "INT4 check (2 prompts, 16 positions): top-1 agreement 87.50%, mean KL 1.00e-2 nats; llama.cpp's Q4_0: 81.25%, 2.00e-2 nats (INT4's mean KL 0.50x, 95% CI 0.40-0.60x)",
    );
    expect(qualitySummary({ ...report, q4_0: { ...report.q4_0!, meanKlRatioCi95: null } })).toMatch(/\(INT4's mean KL 0\.50x\)$/);
    expect(qualitySummary({ ...report, q4_0: null })).toBe('INT4 check (2 prompts, 16 positions): top-1 agreement 87.50%, mean KL 1.00e-2 nats');
  });

  it("are shown for the pack they checked only: a pack whose manifest changed since has none", async () => {
    const model = join(dir, 'model');
    const pack = join(model, 'int4-g32');
    mkdirSync(pack, { recursive: true });
    const manifest = '{"format":"qpacked-v2"}\n';
    writeFileSync(join(pack, 'horizon-manifest.json'), manifest);
    const sha = createHash('sha256').update(manifest).digest('hex');
    const file = qualityReportFile(model, pack);
    await writeQualityReport(file, { ...report, packManifestSha256: sha });
    expect(await readPackQuality(model, pack)).toEqual({ ...report, packManifestSha256: sha });
    writeFileSync(join(pack, 'horizon-manifest.json'), '{"format":"qpacked-v2","again":true}\n');
    expect(await readPackQuality(model, pack)).toBeNull();
    // A report from before the hash was recorded is shown as it is.
    await writeQualityReport(file, report);
    expect(await readPackQuality(model, pack)).toEqual(report);
  });
});
