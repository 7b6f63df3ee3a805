import { useEffect, useState } from 'react';

import { SelectField } from '../../components/SelectField.js';
import { Verdict } from '../../components/Verdict.js';
import { PAGE_SIZE, useResults } from '../../stores/results.js';

export function ResponseBrowser() {
  const detail = useResults((s) => s.detail);
  const page = useResults((s) => s.page);
  const filters = useResults((s) => s.filters);
  const offset = useResults((s) => s.offset);
  const { setFilters, setOffset, openResponse } = useResults.getState();
  const [text, setText] = useState(filters.text);

  useEffect(() => {
    if (text === filters.text) return;
    const t = setTimeout(() => void setFilters({ text }), 250);
    return () => clearTimeout(t);
  }, [text, filters.text, setFilters]);

  const ids = detail?.byInstruction.map((r) => r.instructionId) ?? [];
  const total = page?.total ?? 0;

  return (
    <div className="browser" data-testid="response-browser">
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
            <th scope="col" className="col-key">
              Key
            </th>
            <th scope="col">Prompt</th>
            <th scope="col" className="col-count">
              Instructions
            </th>
            <th scope="col" className="col-verdict">
              Strict
            </th>
            <th scope="col" className="col-verdict">
              Loose
            </th>
          </tr>
        </thead>
        <tbody>
          {page?.items.map((r) => (
            <tr key={r.key}>
              <td className="mono">
                <button
                  type="button"
                  className="link"
                  onClick={() => void openResponse(r.key)}
                  aria-label={`Open response ${r.key}`}
                >
                  #{r.key}
                </button>
              </td>
              <td className="cell-preview" onClick={() => void openResponse(r.key)}>
                {r.promptPreview}
              </td>
              <td>{r.instructionIds.length}</td>
              <td>
                <Verdict pass={r.strictPass} />
              </td>
              <td>
                <Verdict pass={r.loosePass} />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
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
