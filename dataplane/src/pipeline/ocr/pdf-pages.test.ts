import { deflateSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { countPdfPages, PDF_COUNT_BOUNDS, type PdfCountBounds } from './pdf-pages.ts';

const CEILING = 1000;
const BOUNDS: PdfCountBounds = { ceiling: CEILING, ...PDF_COUNT_BOUNDS };
const count = (pdf: string | Buffer, bounds: Partial<PdfCountBounds> = {}): number =>
  countPdfPages(typeof pdf === 'string' ? Buffer.from(pdf, 'latin1') : pdf, { ...BOUNDS, ...bounds });

/** The bytes of an object stream holding `objects` numbered from `from`: header, then objects. */
function objectStreamData(objects: string[], from: number): { data: string; first: number } {
  let body = '';
  const pairs: string[] = [];
  objects.forEach((o, i) => {
    pairs.push(`${from + i} ${body.length}`);
    body += `${o}\n`;
  });
  const header = `${pairs.join(' ')}\n`;
  return { data: header + body, first: header.length };
}

interface StreamOptions {
  /** The stream's dictionary entries besides /N, /First and /Length. */
  dict?: string;
  /** Encodes the data; Flate by default. */
  encode?: (data: Buffer) => Buffer;
}

/** `num 0 obj` an object stream of `objects`, Flate-compressed unless told otherwise. */
function objStm(num: number, objects: string[], opts: StreamOptions = {}): string {
  const { data, first } = objectStreamData(objects, num + 1);
  const bytes = (opts.encode ?? ((d) => deflateSync(d)))(Buffer.from(data, 'latin1'));
  const dict = opts.dict ?? '/Type /ObjStm /Filter /FlateDecode';
  return `${num} 0 obj\n<< ${dict} /N ${objects.length} /First ${first} /Length ${bytes.length} >>\nstream\n${bytes.toString('latin1')}\nendstream\nendobj\n`;
}

const pageObjects = (n: number): string[] =>
  Array.from({ length: n }, () => '<< /Type /Page /Parent 2 0 R >>');
/** A PDF whose only plain page object is a decoy, with `streams` after it. */
const decoyPdf = (...streams: string[]): string =>
  `%PDF-1.7\n1 0 obj << /Type /Catalog /Pages 2 0 R >> endobj\n3 0 obj << /Type /Page /Parent 2 0 R >> endobj\n${streams.join('')}trailer << /Root 1 0 R >>\n%%EOF\n`;

describe('PDF page count for the OCR hold', () => {
  it('counts page objects hidden in Flate object streams with the plain ones', () => {
    expect(count(decoyPdf(objStm(10, pageObjects(20))))).toBe(21);
    expect(count(decoyPdf(objStm(10, pageObjects(5)), objStm(100, pageObjects(7))))).toBe(13);
    // An object stream needs no /Type to be read as one: /First marks it.
    expect(count(decoyPdf(objStm(10, pageObjects(4), { dict: '/Filter /FlateDecode' })))).toBe(5);
    // Names with #xx escapes are the names they spell, plain or compressed.
    expect(count(decoyPdf('5 0 obj << /#54ype /P#61ge >> endobj\n'))).toBe(2);
    expect(count(decoyPdf(objStm(10, ['<< /Type /P#61ge >>', '<< /Type /Page >>'])))).toBe(3);
  });

  it('stops at the ceiling, early', () => {
    expect(count(decoyPdf(objStm(10, pageObjects(999))))).toBe(CEILING);
    expect(count(decoyPdf(objStm(10, pageObjects(5000))))).toBe(CEILING);
  });

  it("takes the page tree's /Count as a lower bound, plain or in an object stream", () => {
    expect(count(decoyPdf(objStm(10, ['<< /Type /Pages /Kids [3 0 R] /Count 40 >>'])))).toBe(40);
    expect(count(decoyPdf('2 0 obj << /Type /Pages /Count 12 >> endobj\n'))).toBe(12);
    // An outline's /Count is not a page count.
    expect(
      count(decoyPdf(objStm(10, ['<< /Type /Outlines /Count 300 >>', '<< /Type /Pages /Count 2 >>']))),
    ).toBe(2);
    // More leaves than the tree admits: the leaves.
    expect(count(decoyPdf(objStm(10, ['<< /Type /Pages /Count 1 >>', ...pageObjects(6)])))).toBe(7);
  });

  it('gives the ceiling when an object stream cannot be read', () => {
    const hex = (d: Buffer) => Buffer.from(d.toString('hex'));
    expect(
      count(
        decoyPdf(objStm(10, pageObjects(3), { dict: '/Type /ObjStm /Filter /ASCIIHexDecode', encode: hex })),
      ),
    ).toBe(CEILING);
    expect(
      count(
        decoyPdf(
          objStm(10, pageObjects(3), {
            dict: '/Type /ObjStm /Filter [/ASCIIHexDecode /FlateDecode]',
            encode: (d) => hex(deflateSync(d)),
          }),
        ),
      ),
    ).toBe(CEILING);
    expect(count(decoyPdf(objStm(10, pageObjects(3), { dict: '/Type /ObjStm /Filter /LZWDecode' })))).toBe(
      CEILING,
    );
    // A filter by reference, or a predictor, is not read here either.
    expect(count(decoyPdf(objStm(10, pageObjects(3), { dict: '/Type /ObjStm /Filter 9 0 R' })))).toBe(
      CEILING,
    );
    expect(
      count(
        decoyPdf(
          objStm(10, pageObjects(3), {
            dict: '/Type /ObjStm /Filter /FlateDecode /DecodeParms << /Predictor 12 >>',
          }),
        ),
      ),
    ).toBe(CEILING);
    // Corrupt and truncated Flate data.
    expect(
      count(decoyPdf(objStm(10, pageObjects(3), { encode: () => Buffer.from('not zlib at all') }))),
    ).toBe(CEILING);
    expect(
      count(decoyPdf(objStm(10, pageObjects(3), { encode: (d) => deflateSync(d).subarray(0, 12) }))),
    ).toBe(CEILING);
  });

  it('gives the ceiling past the inflated-bytes bound, without inflating past it', () => {
    const objects = pageObjects(50);
    const size = Buffer.byteLength(objectStreamData(objects, 11).data);
    const pdf = decoyPdf(objStm(10, objects));
    expect(count(pdf, { maxInflatedBytes: size })).toBe(51);
    expect(count(pdf, { maxInflatedBytes: size - 1 })).toBe(CEILING);
    // The bound is across streams, not per stream.
    expect(
      count(decoyPdf(objStm(10, objects), objStm(100, objects)), { maxInflatedBytes: 2 * size - 1 }),
    ).toBe(CEILING);
    // A 64 MiB zip bomb (64 KiB compressed) is stopped at the 4 MiB bound.
    const bomb = `%PDF-1.7\n3 0 obj << /Type /Page >> endobj\n9 0 obj << /Type /ObjStm /N 1 /First 4 /Filter /FlateDecode >>\nstream\n${deflateSync(Buffer.alloc(64 << 20, 0x20), { level: 9 }).toString('latin1')}\nendstream\nendobj\n`;
    expect(count(bomb)).toBe(CEILING);
  });

  it('gives the ceiling past the number of object streams', () => {
    const tiny = Array.from({ length: 4 }, (_, i) => objStm(10 + 2 * i, ['<< /Type /Font >>']));
    expect(count(decoyPdf(...tiny), { maxObjectStreams: 4 })).toBe(1);
    expect(count(decoyPdf(...tiny), { maxObjectStreams: 3 })).toBe(CEILING);
  });

  it('leaves plain PDFs as they were counted', () => {
    const plain = (n: number) =>
      `%PDF-1.4\n2 0 obj << /Type /Pages /Count ${n} >> endobj\n${Array.from({ length: n }, (_, i) => `${i + 3} 0 obj << /Type /Page /Parent 2 0 R >> endobj`).join('\n')}\n%%EOF`;
    expect(count(plain(1))).toBe(1);
    expect(count(plain(3))).toBe(3);
    expect(count('%PDF-1.7 /Type/Page/Type /Pages')).toBe(1);
    // An uncompressed object stream is plain text: its pages are counted once.
    expect(count(decoyPdf(objStm(10, pageObjects(4), { dict: '/Type /ObjStm', encode: (d) => d })))).toBe(5);
    // Nothing to count: the ceiling.
    expect(count('%PDF-1.7 compressed')).toBe(CEILING);
  });
});
