import { defaultDataDir } from '../../main/data-dir.js';
import { downloadIfevalData, downloadPunkt, evalAssetsStatus, importIfevalData, importPunkt } from '../../main/prep/eval-assets.js';
import { PrepError } from '../../main/prep/prep-error.js';
import { dataDirOption, parseCommandArgs, usageError } from '../command-args.js';

export const summary = 'fetch or import the pinned eval assets (IFEval prompts, Punkt English) into the data folder';

const USAGE = `usage: horizon assets [--data-dir DIR] [--status] [--import-ifeval FILE] [--import-punkt FOLDER_OR_ZIP]
                      [--ifeval-url URL] [--punkt-url URL]
  --data-dir  data folder (also --dir; default $HORIZON_DATA_DIR or the platform app-data folder)
  --import-punkt  a folder holding abbrev_types.txt, collocations.tab, sent_starters.txt and ortho_context.tab, or
                  NLTK's punkt_tab.zip
  Without --status or an import, downloads whichever asset is missing or does not verify.`;

export async function run(args: string[]): Promise<number> {
  const parsed = parseCommandArgs('assets', USAGE, args, {
    'data-dir': { type: 'string' },
    dir: { type: 'string' },
    status: { type: 'boolean' },
    'import-ifeval': { type: 'string' },
    'import-punkt': { type: 'string' },
    'ifeval-url': { type: 'string' },
    'punkt-url': { type: 'string' },
  });
  if (typeof parsed === 'number') return parsed;
  const { values } = parsed;
  let dataDir: string;
  try {
    dataDir = dataDirOption(values, defaultDataDir);
  } catch (e) {
    return usageError('assets', USAGE, (e as Error).message);
  }
  try {
    const imported = values['import-ifeval'] !== undefined || values['import-punkt'] !== undefined;
    if (values['import-ifeval']) console.log(`imported ${await importIfevalData(dataDir, values['import-ifeval'])}`);
    if (values['import-punkt']) console.log(`imported ${await importPunkt(dataDir, values['import-punkt'])}`);
    if (!values.status && !imported) {
      const before = await evalAssetsStatus(dataDir);
      if (!before.ifeval.ready) console.log(`downloaded ${await downloadIfevalData({ dataDir, ...(values['ifeval-url'] ? { url: values['ifeval-url'] } : {}) })}`);
      if (!before.punkt.ready) console.log(`downloaded ${await downloadPunkt({ dataDir, ...(values['punkt-url'] ? { url: values['punkt-url'] } : {}) })}`);
    }
    const status = await evalAssetsStatus(dataDir);
    console.log(`ifeval  ${status.ifeval.ready ? 'ready  ' : 'missing'} ${status.ifeval.path}`);
    console.log(`punkt   ${status.punkt.ready ? 'ready  ' : 'missing'} ${status.punkt.dir}${status.punkt.ready ? '' : ` (${status.punkt.missing.join(', ')})`}`);
    return status.ifeval.ready && status.punkt.ready ? 0 : 1;
  } catch (error) {
    if (error instanceof PrepError) {
      console.error(`horizon assets: ${error.message}`);
      return 1;
    }
    throw error;
  }
}
