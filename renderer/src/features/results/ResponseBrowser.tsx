import { useEffect, useState, type ReactNode } from 'react';

import { ENDING_TEXT, type ResponseSortKey } from '../../../../electron/common/ipc-contract.js';
import { capitalize } from '../../components/format.js';
import { SelectField } from '../../components/SelectField.js';
import { Verdict } from '../../components/Verdict.js';
import { PAGE_SIZE, useResults, type ResponseSort } from '../../stores/results.js';

/** A column header that orders the list by its column; the same header again flips the order. */
function SortHeader(props: { by: ResponseSortKey; sort: ResponseSort; onSort: (by: ResponseSortKey) => void; className?: string; children: ReactNode }) {
  const active = props.sort.by === props.by;
  const direction = active ? (props.sort.descending ? 'descending' : 'ascending') : 'none';
  return (
    <th scope="col" className={props.className} aria-sort={direction}>
      <button type="button" className="th-sort" onClick={() => props.onSort(props.by)}>
        {props.children}
        <span className="th-sort__arrow" aria-hidden="true">
          {active ? (props.sort.descending ? '▼' : '▲') : ''}
        </span>
      </button>
    </th>
  );
}

export function ResponseBrowser() {
  const detail = useResults((s) => s.detail);
  const page = useResults((s) => s.page);
  const filters = useResults((s) => s.filters);
  const offset = useResults((s) => s.offset);
  const sort = useResults((s) => s.sort);
  const openKey = useResults((s) => s.selected?.key ?? null);
  const { setFilters, setOffset, openResponse, sortBy } = useResults.getState();
  const onSort = (by: ResponseSortKey) => void sortBy(by);
  // With an instruction filter the verdict columns are that instruction's, not the prompt's (a prompt can fail
  // through another of its instructions).
  const scope = filters.instructionId ? 'instruction' : 'prompt';
  const [text, setText] = useState(filters.text);

  useEffect(() => {
    if (text === filters.text) return;
    const t = setTimeout(() => void setFilters({ text }), 250);
    return () => clearTimeout(t);
  }, [text, filters.text, setFilters]);

  const ids = detail?.byInstruction.map((r) => r.instructionId) ?? [];
  const total = page?.total ?? 0;

  return (
    <div className="browser" id="response-browser" data-testid="response-browser">
      <div className="filters" role="search" aria-label="Filter responses">
        <SelectField label="Instruction" value={filters.instructionId} onValue={(instructionId) => void setFilters({ instructionId })}>
          <option value="">All instructions</option>
          {ids.map((id) => (
            <option key={id} value={id}>
              {id}
            </option>
          ))}
        </SelectField>
        {/* One control for both: which scoring a verdict filter uses means nothing without a verdict to filter on. */}
        <SelectField
          label="Verdict"
          value={filters.verdict ? `${filters.verdict}:${filters.mode}` : ''}
          onValue={(v) => {
            const [verdict = '', mode = 'strict'] = v.split(':') as ['' | 'pass' | 'fail', 'strict' | 'loose'];
            void setFilters(verdict ? { verdict, mode } : { verdict: '' });
          }}
        >
          <option value="">Pass or fail</option>
          <option value="pass:strict">Pass (strict)</option>
          <option value="fail:strict">Fail (strict)</option>
          <option value="pass:loose">Pass (loose)</option>
          <option value="fail:loose">Fail (loose)</option>
        </SelectField>
        <SelectField label="Ending" value={filters.finish} onValue={(finish) => void setFilters({ finish: finish as '' | 'stop' | 'length' })}>
          <option value="">Any ending</option>
          <option value="stop">{capitalize(ENDING_TEXT.stop)}</option>
          <option value="length">{capitalize(ENDING_TEXT.length)}</option>
        </SelectField>
        <div className="field field--grow">
          <label htmlFor="f-text">Search</label>
          <input
            id="f-text"
            type="search"
            placeholder="Text in prompt or response"
            value={text}
            onChange={(e) => setText(e.target.value)}
          />
        </div>
      </div>
      <table className="table table--rows table--fixed">
        <thead>
          <tr>
            <SortHeader by="key" sort={sort} onSort={onSort} className="col-key">
              Key
            </SortHeader>
            <th scope="col">Prompt</th>
            <SortHeader by="instructions" sort={sort} onSort={onSort} className="col-count">
              Instructions
            </SortHeader>
            <SortHeader by="strict" sort={sort} onSort={onSort} className="col-verdict">
              {scope === 'instruction' ? <abbr title={`${filters.instructionId}, strict`}>Strict*</abbr> : 'Strict'}
            </SortHeader>
            <SortHeader by="loose" sort={sort} onSort={onSort} className="col-verdict">
              {scope === 'instruction' ? <abbr title={`${filters.instructionId}, loose`}>Loose*</abbr> : 'Loose'}
            </SortHeader>
          </tr>
        </thead>
        <tbody>
          {page?.items.map((r) => (
            <tr key={r.key} className={r.key === openKey ? 'is-selected' : undefined}>
              <td className="mono">
                <button
                  type="button"
                  className="link"
                  onClick={() => void openResponse(r.key)}
                  aria-label={`Open response ${r.key}`}
                  aria-current={r.key === openKey || undefined}
                  data-response-key={r.key}
                >
                  #{r.key}
                </button>
              </td>
              <td className="cell-preview" onClick={() => void openResponse(r.key)}>
                {r.finishReason === 'length' ? (
                  <span className="chip chip--muted chip--tiny" title={capitalize(ENDING_TEXT.length)} data-testid="row-cut">
                    cut
                  </span>
                ) : null}
                {r.promptPreview}
                {r.instructionVerdict?.finding ? (
                  <div className="finding" data-testid="row-finding">
                    {r.instructionVerdict.finding}
                  </div>
                ) : null}
              </td>
              <td>{r.instructionIds.length}</td>
              <td data-testid="cell-strict">
                <Verdict pass={r.instructionVerdict?.strictPass ?? r.strictPass} />
              </td>
              <td data-testid="cell-loose">
                <Verdict pass={r.instructionVerdict?.loosePass ?? r.loosePass} />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      {scope === 'instruction' ? (
        <p className="muted small" data-testid="verdict-scope">
          * Strict and Loose show the verdict of {filters.instructionId} in each prompt, not the whole prompt's.
        </p>
      ) : null}
      {page && page.items.length === 0 ? <p className="muted">No responses match these filters.</p> : null}
      <div className="pager">
        <span className="muted" data-testid="pager-status">
          {total ? `${offset + 1}–${Math.min(offset + PAGE_SIZE, total)} of ${total}` : '0 responses'}
        </span>
        <button type="button" className="btn btn--small" disabled={offset === 0} onClick={() => void setOffset(offset - PAGE_SIZE)}>
          Previous
        </button>
        <button
          type="button"
          className="btn btn--small"
          disabled={offset + PAGE_SIZE >= total}
          onClick={() => void setOffset(offset + PAGE_SIZE)}
        >
          Next
        </button>
      </div>
    </div>
  );
}
