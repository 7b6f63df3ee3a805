import { migration0001Init } from './0001-init.js';
import { migration0002PeakVramScope } from './0002-peak-vram-scope.js';
import { migration0003ExpertCache } from './0003-expert-cache.js';
import { migration0004PerfCampaigns } from './0004-perf-campaigns.js';
import { migration0005OneNamePerConcept } from './0005-one-name-per-concept.js';
import { migration0006Imports } from './0006-imports.js';
import { migration0007RunLabels } from './0007-run-labels.js';
import { migration0008CampaignLabels } from './0008-campaign-labels.js';
import { migration0009RunQuality } from './0009-run-quality.js';
import type { Migration } from './migration.js';

/** Every migration in version order; to add one, write `NNNN-name.ts` with its test and append it here. */
export const allMigrations: readonly Migration[] = [
  migration0001Init,
  migration0002PeakVramScope,
  migration0003ExpertCache,
  migration0004PerfCampaigns,
  migration0005OneNamePerConcept,
  migration0006Imports,
  migration0007RunLabels,
  migration0008CampaignLabels,
  migration0009RunQuality,
];
