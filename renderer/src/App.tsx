import { useEffect } from 'react';

import { Logo } from './components/Logo.js';
import { NavIcon } from './components/NavIcon.js';
import { HistoryPage } from './features/history/HistoryPage.js';
import { ModelsPage } from './features/models/ModelsPage.js';
import { PerfPage } from './features/perf/PerfPage.js';
import { ResultsPage } from './features/results/ResultsPage.js';
import { RunPage } from './features/runs/RunPage.js';
import { SystemPage } from './features/system/SystemPage.js';
import { useConnection } from './stores/connection.js';
import { connectEvents } from './stores/events.js';
import { PAGES, useNav, type Page } from './stores/nav.js';
import { syncUrlState } from './stores/url-state.js';
import { useRuns } from './stores/runs.js';
import { useSidebar } from './stores/sidebar.js';
import { useSystem } from './stores/system.js';
import { useTheme, type ThemeChoice } from './stores/theme.js';

function Screen({ page }: { page: Page }) {
  switch (page) {
    case 'system':
      return <SystemPage />;
    case 'models':
      return <ModelsPage />;
    case 'run':
      return <RunPage />;
    case 'results':
      return <ResultsPage />;
    case 'history':
      return <HistoryPage />;
    case 'perf':
      return <PerfPage />;
  }
}

function ThemePicker() {
  const choice = useTheme((s) => s.choice);
  return (
    <label className="theme-picker">
      <span className="sr-only">Colour theme</span>
      <select value={choice} onChange={(e) => useTheme.getState().choose(e.target.value as ThemeChoice)} aria-label="Colour theme">
        <option value="system">System theme</option>
        <option value="light">Light</option>
        <option value="dark">Dark</option>
      </select>
    </label>
  );
}

/** One notice for the whole app while the services cannot be reached; it goes by itself once they answer again. */
function ConnectionBanner() {
  const up = useConnection((s) => s.up);
  if (up) return null;
  return (
    <div className="connection-lost" role="alert" data-testid="connection-lost">
      <strong>Connection to the local server lost — retrying…</strong>{' '}
      <span>
        What is shown is as it was; live figures are paused. If <span className="mono">horizon serve</span> was restarted,
        open the address it printed.
      </span>
    </div>
  );
}

/** Its own component: App (and the page under it) must not render again on each progress event of a live run. */
function RunBadge() {
  const count = useRuns((s) => (s.run?.status === 'running' ? `${s.run.done}/${s.run.total}` : null));
  if (count === null) return null;
  return (
    <span className="nav__badge">
      <span className="sr-only">in progress: </span>
      {count}
    </span>
  );
}

export function App() {
  const page = useNav((s) => s.page);
  const go = useNav((s) => s.go);
  const backend = useSystem((s) => (s.info ? (s.info.backend === 'cpu' ? 'CPU backend' : (s.info.gpus[0]?.name ?? 'CUDA')) : null));
  const offline = useConnection((s) => !s.up);
  const collapsed = useSidebar((s) => s.collapsed);

  useEffect(() => connectEvents(), []);
  useEffect(() => syncUrlState(), []);
  // A run already in progress (a reload, another window) shows in the sidebar before its page is visited.
  useEffect(() => {
    void useRuns.getState().attachActive();
  }, []);
  useEffect(() => {
    document.getElementById('main')?.focus();
    document.title = `${PAGES.find((p) => p.id === page)?.label ?? ''} · Horizon RunMap`;
  }, [page]);

  return (
    <div className={collapsed ? 'shell shell--collapsed' : 'shell'}>
      <a
        className="skip"
        href="#main"
        onClick={(e) => {
          // Following the link would replace the URL fragment, which carries `horizon serve`'s token: a reload after it fails.
          e.preventDefault();
          document.getElementById('main')?.focus();
        }}
      >
        Skip to content
      </a>
      <nav className="sidebar" aria-label="Main">
        <div className="sidebar__inner">
          <div className="brand">
            <Logo size={30} />
            <div className="brand__text">
              <div className="brand__name">Horizon RunMap</div>
              <div className="brand__sub">OLMoE · INT4 · IFEval</div>
            </div>
          </div>
          <ul className="nav">
            {PAGES.map((p) => (
              <li key={p.id}>
                <button
                  type="button"
                  className="nav__item"
                  aria-current={page === p.id ? 'page' : undefined}
                  onClick={() => go(p.id)}
                  title={collapsed ? p.label : undefined}
                >
                  <NavIcon page={p.id} />
                  <span className="nav__label">{p.label}</span>
                  {p.id === 'run' ? <RunBadge /> : null}
                </button>
              </li>
            ))}
          </ul>
          {/* After the pages in the tab order (the skip link leads to them); drawn at the top. */}
          <button
            type="button"
            className="sidebar__toggle"
            aria-expanded={!collapsed}
            aria-label={collapsed ? 'Expand the sidebar' : 'Collapse the sidebar'}
            title={collapsed ? 'Expand the sidebar' : 'Collapse the sidebar'}
            onClick={() => useSidebar.getState().toggle()}
          >
            <span aria-hidden="true">{collapsed ? '»' : '«'}</span>
          </button>
          <div className="sidebar__foot">
            <span>{backend ?? ' '}</span>
            <ThemePicker />
          </div>
        </div>
      </nav>
      <main id="main" className={offline ? 'main is-offline' : 'main'} tabIndex={-1} aria-busy={offline || undefined}>
        <ConnectionBanner />
        <Screen page={page} />
      </main>
    </div>
  );
}
