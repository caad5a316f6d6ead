import { describe, expect, it } from 'vitest';
import {
  acceptedRequestId,
  MAX_REQUEST_ID_LENGTH,
  parseTraceparent,
  upstreamHeaders,
  type TraceContext,
} from './trace-context.ts';

const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const PARENT = '00f067aa0ba902b7';

describe('acceptedRequestId', () => {
  it.each(['abc', 'req-123_x.y', '0f2c1a9e-8b7d-4c3e-9a1b-2d3e4f5a6b7c', 'urn:x/y=z@1', 'a'.repeat(128)])(
    'accepts %s',
    (id) => expect(acceptedRequestId(id)).toBe(id),
  );

  it.each([
    ['empty', ''],
    ['too long', 'a'.repeat(MAX_REQUEST_ID_LENGTH + 1)],
    ['a space', 'a b'],
    ['a newline (log injection)', 'a\nb'],
    ['a quote', 'a"b'],
    ['non-ASCII', 'réq'],
    ['a control character', 'a\u0000b'],
  ])('rejects %s', (_why, id) => expect(acceptedRequestId(id)).toBeUndefined());

  it('rejects a repeated header (an array) and absence', () => {
    expect(acceptedRequestId(['a', 'b'])).toBeUndefined();
    expect(acceptedRequestId(undefined)).toBeUndefined();
  });
});

describe('parseTraceparent', () => {
  it('reads a valid version-00 header, with its tracestate', () => {
    expect(parseTraceparent(`00-${TRACE}-${PARENT}-01`, 'congo=t61rcWkgMzE')).toEqual({
      traceId: TRACE,
      parentId: PARENT,
      spanId: undefined,
      flags: 1,
      state: 'congo=t61rcWkgMzE',
    });
  });

  it('reads an unsampled one', () => {
    expect(parseTraceparent(`00-${TRACE}-${PARENT}-00`, undefined)?.flags).toBe(0);
  });

  it('accepts a later version with more fields after the flags', () => {
    expect(parseTraceparent(`01-${TRACE}-${PARENT}-01-extra`, undefined)?.traceId).toBe(TRACE);
  });

  it.each([
    ['upper-case hex', `00-${TRACE.toUpperCase()}-${PARENT}-01`],
    ['version ff', `ff-${TRACE}-${PARENT}-01`],
    ['version 00 with extra fields', `00-${TRACE}-${PARENT}-01-x`],
    ['an all-zero trace id', `00-${'0'.repeat(32)}-${PARENT}-01`],
    ['an all-zero parent id', `00-${TRACE}-${'0'.repeat(16)}-01`],
    ['a short trace id', `00-${TRACE.slice(1)}-${PARENT}-01`],
    ['garbage', 'hello'],
  ])('rejects %s', (_why, header) => expect(parseTraceparent(header, undefined)).toBeUndefined());

  it('drops an oversized tracestate but keeps the trace', () => {
    const t = parseTraceparent(`00-${TRACE}-${PARENT}-01`, `k=${'v'.repeat(600)}`);
    expect(t?.traceId).toBe(TRACE);
    expect(t?.state).toBeUndefined();
  });
});

describe('upstreamHeaders', () => {
  const incoming: TraceContext = {
    traceId: TRACE,
    parentId: PARENT,
    spanId: undefined,
    flags: 1,
    state: 'a=b',
  };

  it('always carries the request id', () => {
    expect(upstreamHeaders('req-1', undefined)).toEqual({ 'x-request-id': 'req-1' });
  });

  it('passes the caller’s context on untouched when Gantry records no span', () => {
    expect(upstreamHeaders('req-1', incoming)).toEqual({
      'x-request-id': 'req-1',
      traceparent: `00-${TRACE}-${PARENT}-01`,
      tracestate: 'a=b',
    });
  });

  it('makes Gantry’s span the upstream’s parent when it records one', () => {
    const ours = { ...incoming, spanId: 'b7ad6b7169203331' };
    expect(upstreamHeaders('req-1', ours).traceparent).toBe(`00-${TRACE}-b7ad6b7169203331-01`);
  });
});
