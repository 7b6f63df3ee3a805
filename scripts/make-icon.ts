/**
 * Draws the app icon (the renderer's Logo: gradient tile, horizon line, routed path with nodes) into
 * resources/icon.png at 1024 px, with 4x4 supersampling, and writes it as an RGBA PNG. Run: `npx tsx scripts/make-icon.ts`.
 */
import { renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { deflateSync } from 'node:zlib';

type Rgba = [number, number, number, number];
const SIZE = 1024;
const SS = 4;
const U = SIZE / 64; // the logo is drawn on a 64-unit grid

function crc32(buf: Buffer): number {
  let c = ~0;
  for (const b of buf) {
    c ^= b;
    for (let k = 0; k < 8; k++) c = (c >>> 1) ^ (0xedb88320 & -(c & 1));
  }
  return ~c >>> 0;
}

function chunk(type: string, data: Buffer): Buffer {
  const len = Buffer.alloc(4);
  len.writeUInt32BE(data.length);
  const td = Buffer.concat([Buffer.from(type, 'ascii'), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(td));
  return Buffer.concat([len, td, crc]);
}

export function encodePng(width: number, height: number, rgba: Uint8Array): Buffer {
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr[8] = 8;
  ihdr[9] = 6;
  const raw = Buffer.alloc((width * 4 + 1) * height);
  for (let y = 0; y < height; y++) {
    raw[y * (width * 4 + 1)] = 0;
    Buffer.from(rgba.buffer, rgba.byteOffset + y * width * 4, width * 4).copy(raw, y * (width * 4 + 1) + 1);
  }
  const sig = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  return Buffer.concat([sig, chunk('IHDR', ihdr), chunk('IDAT', deflateSync(raw, { level: 9 })), chunk('IEND', Buffer.alloc(0))]);
}

function segDist(px: number, py: number, ax: number, ay: number, bx: number, by: number): number {
  const dx = bx - ax;
  const dy = by - ay;
  const t = Math.max(0, Math.min(1, ((px - ax) * dx + (py - ay) * dy) / (dx * dx + dy * dy)));
  return Math.hypot(px - (ax + t * dx), py - (ay + t * dy));
}

function inRoundRect(x: number, y: number, r: number): boolean {
  const cx = Math.min(Math.max(x, r), 64 - r);
  const cy = Math.min(Math.max(y, r), 64 - r);
  return Math.hypot(x - cx, y - cy) <= r && x >= 0 && y >= 0 && x <= 64 && y <= 64;
}

const WHITE: Rgba = [255, 255, 255, 255];
const YELLOW: Rgba = [250, 204, 21, 255];
const path1: [number, number][] = [
  [18, 44],
  [26, 26],
  [34, 34],
  [44, 18],
];

/** The colour of one sample at logo coordinates (x, y). */
function sample(x: number, y: number): Rgba {
  if (!inRoundRect(x, y, 14)) return [0, 0, 0, 0];
  if (Math.hypot(x - 44, y - 18) <= 4.5) return YELLOW;
  if (Math.hypot(x - 26, y - 26) <= 4 || Math.hypot(x - 34, y - 34) <= 4) return WHITE;
  if (y >= 44 - 1.75 && y <= 44 + 1.75 && x >= 10 - 1.75 && x <= 54 + 1.75 && segDist(x, y, 10, 44, 54, 44) <= 1.75) return WHITE;
  for (let i = 0; i < path1.length - 1; i++) {
    const [a, b] = [path1[i]!, path1[i + 1]!];
    if (segDist(x, y, a[0], a[1], b[0], b[1]) <= 1.75) return WHITE;
  }
  const t = (x + y) / 128;
  const from = [79, 70, 229];
  const to = [14, 165, 233];
  return [0, 1, 2].map((k) => Math.round(from[k]! + (to[k]! - from[k]!) * t)).concat(255) as Rgba;
}

export function drawIcon(size = SIZE): Uint8Array {
  const out = new Uint8Array(size * size * 4);
  const unit = size / 64;
  for (let py = 0; py < size; py++) {
    for (let px = 0; px < size; px++) {
      const acc = [0, 0, 0, 0];
      for (let sy = 0; sy < SS; sy++) {
        for (let sx = 0; sx < SS; sx++) {
          const c = sample((px + (sx + 0.5) / SS) / unit, (py + (sy + 0.5) / SS) / unit);
          const a = c[3] / 255;
          acc[0]! += c[0] * a;
          acc[1]! += c[1] * a;
          acc[2]! += c[2] * a;
          acc[3]! += a;
        }
      }
      const i = (py * size + px) * 4;
      const alpha = acc[3]! / (SS * SS);
      out[i] = acc[3] ? Math.round(acc[0]! / acc[3]!) : 0;
      out[i + 1] = acc[3] ? Math.round(acc[1]! / acc[3]!) : 0;
      out[i + 2] = acc[3] ? Math.round(acc[2]! / acc[3]!) : 0;
      out[i + 3] = Math.round(alpha * 255);
    }
  }
  return out;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const target = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', 'resources', 'icon.png');
  writeFileSync(`${target}.tmp`, encodePng(SIZE, SIZE, drawIcon(SIZE)));
  renameSync(`${target}.tmp`, target);
  console.log(`wrote ${target} (${SIZE}x${SIZE}, unit ${U}px)`);
}
