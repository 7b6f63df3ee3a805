/**
 * The page, the run open on Results and its open response live in the address's query (`?page=results&run=…&
 * response=1000`), so that a reload (or a copied `horizon serve` link) comes back to the same place. The fragment is
 * left alone: it carries `horizon serve`'s token on a tab's first load.
 */
import { PAGES, useNav, type Page } from './nav.js';
import { useResults } from './results.js';

export interface UrlState {
  readonly page: Page;
  readonly runId: string | null;
  readonly responseKey: number | null;
}

const RUN_ID = /^[\w.:-]{1,128}$/;

/** What a query string asks for; anything unknown or malformed is ignored rather than trusted. */
export function parseUrlState(search: string): UrlState {
  const q = new URLSearchParams(search);
  const page = PAGES.find((p) => p.id === q.get('page'))?.id ?? 'system';
  const run = q.get('run');
  const runId = page === 'results' && run && RUN_ID.test(run) ? run : null;
  const key = Number(q.get('response'));
  const responseKey = runId && q.get('response') && Number.isSafeInteger(key) && key >= 0 ? key : null;
  return { page, runId, responseKey };
}

/** The query string for a state (empty on the first page, which needs none). */
export function formatUrlState(s: UrlState): string {
  const q = new URLSearchParams();
  if (s.page !== 'system') q.set('page', s.page);
  if (s.page === 'results' && s.runId) {
    q.set('run', s.runId);
    if (s.responseKey !== null) q.set('response', String(s.responseKey));
  }
  const text = q.toString();
  return text ? `?${text}` : '';
}

/** The little of `window` this uses; typed here so Node-side tests type-check this file too. */
export interface UrlWindow {
  readonly location: { readonly pathname: string; readonly search: string; readonly hash: string };
  readonly history: { pushState(data: unknown, unused: string, url?: string): void; replaceState(data: unknown, unused: string, url?: string): void };
  addEventListener(type: 'popstate', listener: () => void): void;
  removeEventListener(type: 'popstate', listener: () => void): void;
}

function current(): UrlState {
  const r = useResults.getState();
  return { page: useNav.getState().page, runId: r.runId, responseKey: r.selected?.key ?? null };
}

/**
 * Opens what the address names, then keeps the address in step: a page change is a history entry (Back returns to
 * the page before), a run or response opened on Results replaces the current one. Returns the unsubscriber.
 */
export function syncUrlState(w: UrlWindow = globalThis as unknown as UrlWindow): () => void {
  const apply = (s: UrlState) => {
    useNav.getState().go(s.page);
    if (s.runId) {
      void useResults
        .getState()
        .open(s.runId)
        .then(() => {
          if (s.responseKey !== null && useResults.getState().runId === s.runId) void useResults.getState().openResponse(s.responseKey);
        });
    }
  };
  let restoring = true;
  apply(parseUrlState(w.location.search));
  restoring = false;
  let last = formatUrlState(current());
  const write = () => {
    if (restoring) return;
    const next = formatUrlState(current());
    if (next === last) return;
    const pageChanged = parseUrlState(next).page !== parseUrlState(last).page;
    last = next;
    const url = `${w.location.pathname}${next}${w.location.hash}`;
    if (pageChanged) w.history.pushState(null, '', url);
    else w.history.replaceState(null, '', url);
  };
  const onPop = () => {
    restoring = true;
    const s = parseUrlState(w.location.search);
    last = formatUrlState(s);
    useNav.getState().go(s.page);
    if (s.runId && useResults.getState().runId !== s.runId) void useResults.getState().open(s.runId);
    restoring = false;
  };
  const offNav = useNav.subscribe(write);
  const offResults = useResults.subscribe((s, prev) => {
    if (s.runId !== prev.runId || s.selected?.key !== prev.selected?.key) write();
  });
  w.addEventListener('popstate', onPop);
  return () => {
    offNav();
    offResults();
    w.removeEventListener('popstate', onPop);
  };
}
