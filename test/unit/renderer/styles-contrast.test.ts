/**
 * WCAG 2.x contrast of the colours renderer/src/styles.css puts text on: 4.5:1 for text (none of it is large), 3:1
 * for an input's outline. To add a pair: name the text colour and the surface it sits on, as a variable or a hex.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';

import { beforeEach, describe, expect, it } from 'vitest';

const css = readFileSync(path.resolve(import.meta.dirname, '..', '..', '..', 'renderer', 'src', 'styles.css'), 'utf8');
const block = (re: RegExp) => re.exec(css)?.[1] ?? '';
const hexVars = (text: string) => new Map([...text.matchAll(/--([\w-]+):\s*(#[0-9a-f]{6})\s*;/gi)].map((m) => [m[1]!, m[2]!.toLowerCase()]));
const light = hexVars(block(/:root\s*{([^}]*)}/));
// The dark theme names the same variables; one it leaves out keeps its light value.
const dark = new Map([...light, ...hexVars(block(/:root\[data-theme='dark'\]\s*{([^}]*)}/))]);
const themes = { light, dark } as const;
let vars = light;

function color(name: string): string {
  const hex = name.startsWith('#') ? name : vars.get(name);
  if (!hex) throw new Error(`styles.css defines no --${name}`);
  return hex;
}

function luminance(hex: string): number {
  const [r, g, b] = [1, 3, 5].map((i) => {
    const c = parseInt(hex.slice(i, i + 2), 16) / 255;
    return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
  });
  return 0.2126 * r! + 0.7152 * g! + 0.0722 * b!;
}

function contrast(fg: string, bg: string): number {
  const [hi, lo] = [luminance(color(fg)), luminance(color(bg))].sort((x, y) => y - x);
  return (hi! + 0.05) / (lo! + 0.05);
}

describe.each(['light', 'dark'] as const)('styles.css contrast (%s)', (theme) => {
  beforeEach(() => {
    vars = themes[theme];
  });

  it('defines every light variable in the dark theme too', () => {
    const own = hexVars(block(/:root\[data-theme='dark'\]\s*{([^}]*)}/));
    expect([...light.keys()].filter((k) => !own.has(k))).toEqual([]);
  });

  it.each([
    // Muted text: hints, card subtitles, table headers, stat labels, on cards, stats, the page and a selected row.
    ['muted', 'surface'],
    ['muted', 'surface-2'],
    ['muted', 'bg'],
    ['muted', 'accent-soft'],
    ['text-2', 'surface-2'],
    ['text', 'bg'],
    // Chips and statuses (12px, bold is not large).
    ['ok', 'ok-soft'],
    ['ok', 'surface'],
    ['bad', 'bad-soft'],
    ['bad', 'surface'],
    ['accent', 'accent-soft'],
    ['accent', 'surface'],
    ['#ffffff', 'accent-fill'],
    // The Delete run button.
    ['#ffffff', 'bad-fill'],
    ['side-text', 'side'],
    ['notice-bad-text', 'bad-soft'],
    ['notice-ok-text', 'ok-soft'],
    ['notice-info-text', 'accent-soft'],
    ['text', 'warn-soft'],
    ['text', 'control-bg'],
    ['text', 'surface'],
    // The part of a compared response that differs from the other side's.
    ['text', 'accent-soft'],
    ['muted', 'neutral-soft'],
    ['text-2', 'neutral-soft'],
    ['muted', 'row-hover'],
  ])('%s on %s is at least 4.5:1', (fg, bg) => {
    expect(contrast(fg, bg)).toBeGreaterThanOrEqual(4.5);
  });

  it('draws input outlines at 3:1 against a card', () => {
    expect(contrast('field-border', 'surface')).toBeGreaterThanOrEqual(3);
    expect(contrast('field-border', 'control-bg')).toBeGreaterThanOrEqual(3);
    expect(css).toMatch(/input,\s*select\s*{[^}]*border: 1px solid var\(--field-border\)/);
  });
});
