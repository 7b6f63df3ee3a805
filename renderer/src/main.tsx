import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';

import { App } from './App.js';
import { applyTheme, useTheme } from './stores/theme.js';
import './styles.css';

// Before the first paint: a dark choice must not flash light.
applyTheme(useTheme.getState().choice);

const root = document.getElementById('root');
if (!root) throw new Error('renderer/index.html: #root is missing');
createRoot(root).render(
  <StrictMode>
    <App />
  </StrictMode>,
);
