import path from 'node:path';
import { fileURLToPath } from 'node:url';

import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

const root = path.dirname(fileURLToPath(import.meta.url));

export default defineConfig({
  root: path.join(root, 'renderer'),
  base: './',
  plugins: [react()],
  build: {
    outDir: path.join(root, 'out', 'renderer'),
    emptyOutDir: true,
    // Inline assets would need 'data:' script/style sources; the CSP allows only files.
    assetsInlineLimit: 0,
    modulePreload: { polyfill: false },
  },
});
