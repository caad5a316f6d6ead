/**
 * CPU time of the OCR hold's PDF page count (pdfPageCount, pdf-pages.ts) on ~5 MB PDFs built
 * here: a realistic one (pages and their dictionaries in Flate object streams, padded with
 * incompressible content streams), nearly the most inflation the bounds allow (500 streams, ~3.7
 * MiB inflated), 5 MB of tiny object streams (stopped at 500), a 5 MB zip bomb, and a plain PDF.
 * Each row: median and max process CPU per call over the runs, and the page count. The plain
 * regex count that came before is timed on the same bytes for comparison.
 * Run: npx tsx scripts/measure-pdf-pages.ts
 */
import { randomBytes } from 'node:crypto';
import { deflateSync } from 'node:zlib';
import { pdfPageCount } from '../dataplane/src/pipeline/ocr/document.ts';

const TARGET = 5 * 1024 * 1024;
const RUNS = 21;

function objStm(num: number, objects: string[], level = 6): Buffer {
  let body = '';
  const pairs: string[] = [];
  objects.forEach((o, i) => {
    pairs.push(`${num + 1 + i} ${body.length}`);
    body += `${o}\n`;
  });
  const header = `${pairs.join(' ')}\n`;
  const data = deflateSync(Buffer.from(header + body, 'latin1'), { level });
  return Buffer.concat([
    Buffer.from(
      `${num} 0 obj\n<< /Type /ObjStm /N ${objects.length} /First ${header.length} /Filter /FlateDecode /Length ${data.length} >>\nstream\n`,
    ),
    data,
    Buffer.from('\nendstream\nendobj\n'),
  ]);
}

function content(num: number, size: number): Buffer {
  return Buffer.concat([
    Buffer.from(`${num} 0 obj\n<< /Filter /FlateDecode /Length ${size} >>\nstream\n`),
    randomBytes(size),
    Buffer.from('\nendstream\nendobj\n'),
  ]);
}

const head = Buffer.from('%PDF-1.7\n1 0 obj << /Type /Catalog /Pages 2 0 R >> endobj\n');
const tail = Buffer.from('trailer << /Root 1 0 R >>\n%%EOF\n');
const pad = (parts: Buffer[], num: number): Buffer[] => {
  const size = parts.reduce((n, p) => n + p.length, 0);
  return size < TARGET ? [...parts, content(num, TARGET - size)] : parts;
};
const pdf = (parts: Buffer[]): Buffer => Buffer.concat([head, ...parts, tail]);

/** 900 pages, 10 a stream with 40 other dictionaries each (fonts, annotations), 90 streams. */
function realistic(): Buffer {
  const parts: Buffer[] = [];
  for (let s = 0; s < 90; s++) {
    const objects = [
      ...Array.from(
        { length: 10 },
        () =>
          '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 99 0 R /Resources << /Font << /F1 7 0 R >> >> >>',
      ),
      ...Array.from(
        { length: 40 },
        (_, i) =>
          `<< /Type /Annot /Subtype /Link /Rect [${i} 0 100 20] /A << /S /URI /URI (https://example.com/${s}/${i}) >> >>`,
      ),
    ];
    parts.push(objStm(10 + s * 100, objects));
  }
  return pdf(pad(parts, 99999));
}

/** 500 streams inflating to ~7.5 KiB each (~3.7 MiB, under the 4 MiB bound), one page in them. */
function mostInflation(): Buffer {
  const filler = Array.from(
    { length: 50 },
    (_, i) => `<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica${i} /Widths [${'500 '.repeat(20)}] >>`,
  );
  const parts = Array.from({ length: 500 }, (_, s) =>
    objStm(10 + s * 100, s === 0 ? ['<< /Type /Page >>', ...filler] : filler),
  );
  return pdf(pad(parts, 99999));
}

function tinyStreams(): Buffer {
  const one = (n: number) => objStm(n, ['<< /Type /Font >>']);
  const per = one(10).length;
  return pdf(Array.from({ length: Math.floor(TARGET / per) }, (_, i) => one(10 + 2 * i)));
}

function bomb(): Buffer {
  // Zeros deflate ~1000:1: ~5 MB of bomb would inflate to ~5 GB.
  const data = deflateSync(Buffer.alloc(256 << 20), { level: 9 });
  const copies = Math.max(1, Math.floor(TARGET / data.length));
  return pdf(
    Array.from({ length: copies }, (_, i) =>
      Buffer.concat([
        Buffer.from(`${10 + i} 0 obj << /Type /ObjStm /N 1 /First 4 /Filter /FlateDecode >>\nstream\n`),
        data,
        Buffer.from('\nendstream\nendobj\n'),
      ]),
    ),
  );
}

function plain(): Buffer {
  const pages = Array.from(
    { length: 300 },
    (_, i) => `${i + 3} 0 obj << /Type /Page /Parent 2 0 R /Contents ${i + 1000} 0 R >> endobj\n`,
  ).join('');
  return pdf(pad([Buffer.from(`2 0 obj << /Type /Pages /Count 300 >> endobj\n${pages}`)], 99999));
}

const before = (bytes: Buffer): number =>
  bytes.toString('latin1').match(/\/Type\s*\/Page(?![a-zA-Z])/g)?.length ?? 0;

function cpuMs(fn: () => number): { median: number; max: number; result: number } {
  const times: number[] = [];
  let result = 0;
  for (let i = 0; i < RUNS; i++) {
    const t = process.cpuUsage();
    result = fn();
    const d = process.cpuUsage(t);
    times.push((d.user + d.system) / 1000);
  }
  times.sort((a, b) => a - b);
  return { median: times[RUNS >> 1]!, max: times[RUNS - 1]!, result };
}

const cases: [string, () => Buffer][] = [
  ['realistic: 900 pages in 90 object streams', realistic],
  ['most inflation: 500 streams, ~3.7 MiB', mostInflation],
  ['tiny object streams (stopped at 500)', tinyStreams],
  ['zip bomb (stopped at 4 MiB)', bomb],
  ['plain: 300 page objects, no streams', plain],
];
console.log('case | MB | new median / max ms CPU | pages | before median ms | pages before');
for (const [name, build] of cases) {
  const bytes = build();
  const now = cpuMs(() => pdfPageCount(bytes));
  const old = cpuMs(() => before(bytes));
  console.log(
    `${name} | ${(bytes.length / 1048576).toFixed(1)} | ${now.median.toFixed(1)} / ${now.max.toFixed(1)} | ${now.result} | ${old.median.toFixed(1)} | ${old.result}`,
  );
}
