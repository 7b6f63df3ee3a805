/** Display formatting shared by the screens. */

export { weightsLabel } from '../../../electron/common/model-ref.js';

export function formatBytes(bytes: number | null | undefined): string {
  if (bytes == null || !Number.isFinite(bytes)) return '—';
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let v = bytes;
  let i = 0;
  while (Math.abs(v) >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  // 1023.96 MiB would print as "1024.0 MiB", and a rate of 1023.6 B/s as "1024 B/s": that is 1.0 GiB, 1.0 KiB/s.
  if (i < units.length - 1 && Math.abs(Number(v.toFixed(i === 0 ? 0 : 1))) >= 1024) {
    v /= 1024;
    i++;
  }
  return `${i === 0 ? v.toFixed(0) : v.toFixed(1)} ${units[i]}`;
}

export function formatRate(bytesPerSecond: number): string {
  return bytesPerSecond > 0 ? `${formatBytes(bytesPerSecond)}/s` : '—';
}

export function formatDuration(seconds: number | null | undefined): string {
  if (seconds == null || !Number.isFinite(seconds) || seconds < 0) return '—';
  if (seconds < 1) return `${seconds.toFixed(1)}s`;
  const s = Math.round(seconds);
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m ${String(s % 60).padStart(2, '0')}s`;
  return `${Math.floor(m / 60)}h ${String(m % 60).padStart(2, '0')}m`;
}

export function formatPercent(fraction: number | null | undefined, digits = 1): string {
  if (fraction == null || !Number.isFinite(fraction)) return '—';
  return `${(fraction * 100).toFixed(digits)}%`;
}

/** Grouped like the other counts on screen ("3,616.2", as `toLocaleString` writes "561,463"). */
export function formatNumber(value: number | null | undefined, digits = 1): string {
  if (value == null || !Number.isFinite(value)) return '—';
  return value.toLocaleString(undefined, { minimumFractionDigits: digits, maximumFractionDigits: digits });
}

export function formatDate(iso: string | null | undefined): string {
  if (!iso) return '—';
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? iso : d.toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' });
}

/** b − a in percentage points as shown (one decimal), so that its sign and its text agree; null when either is missing. */
export function deltaPoints(a: number | null | undefined, b: number | null | undefined): number | null {
  if (a == null || b == null) return null;
  return Math.round((b - a) * 1000) / 10 || 0; // never -0
}

/** Signed difference in percentage points, e.g. "+2.5 pp"; "±0.0 pp" when it rounds to nothing. */
export function formatDelta(a: number | null | undefined, b: number | null | undefined): string {
  const d = deltaPoints(a, b);
  if (d === null) return '—';
  return `${d > 0 ? '+' : d < 0 ? '−' : '±'}${Math.abs(d).toFixed(1)} pp`;
}

/** The last part of a path from either platform ("C:\\runs\\a.zip" and "/runs/a.zip" give "a.zip"). */
export function baseName(path: string): string {
  return path.split(/[\\/]/).filter(Boolean).at(-1) ?? path;
}

export function shortSha(sha: string): string {
  return sha.slice(0, 7);
}

/** A run or campaign as a one-line list names it: its id, then its label when it has one. */
export function withLabel(id: string, label: string | null): string {
  return label === null ? id : `${id} · ${label}`;
}

/** A text as the start of a sentence: its first letter upper case ("cut at max new tokens" -> "Cut at …"). */
export function capitalize(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}
