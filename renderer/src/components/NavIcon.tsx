import type { Page } from '../stores/nav.js';

/** One 20px line icon per page, for the collapsed sidebar (and beside the labels when open). */
const PATHS: Record<Page, string> = {
  system: 'M5 5h10v10H5z M8 2v3 M12 2v3 M8 15v3 M12 15v3 M2 8h3 M2 12h3 M15 8h3 M15 12h3',
  models: 'M10 2 17 6v8l-7 4-7-4V6z M3 6l7 4 7-4 M10 10v8',
  run: 'M6 4v12l10-6z',
  results: 'M3 17h14 M5 14V9 M9 14V4 M13 14V7',
  history: 'M10 3a7 7 0 1 1-7 7 M3 4v4h4 M10 6v4l3 2',
  perf: 'M3 14a7 7 0 0 1 14 0 M10 14l4-5 M3 17h14',
};

export function NavIcon({ page }: { page: Page }) {
  return (
    <svg className="nav__icon" width="20" height="20" viewBox="0 0 20 20" aria-hidden="true" focusable="false">
      <path d={PATHS[page]} fill="none" stroke="currentColor" strokeWidth="1.6" strokeLinecap="round" strokeLinejoin="round" />
    </svg>
  );
}
