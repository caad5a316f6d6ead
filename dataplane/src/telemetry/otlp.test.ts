import { describe, expect, it } from 'vitest';
import { OtlpTracer, otlpFromEnv } from './otlp.ts';

describe('otlpFromEnv', () => {
  it('is off without an endpoint', () => {
    expect(otlpFromEnv({})).toBeUndefined();
  });

  it('GANTRY_OTLP_ENDPOINT and OTEL_EXPORTER_OTLP_ENDPOINT are bases; /v1/traces is appended', () => {
    expect(otlpFromEnv({ GANTRY_OTLP_ENDPOINT: 'http://c:4318/' })?.url).toBe('http://c:4318/v1/traces');
    expect(otlpFromEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318' })?.url).toBe(
      'http://c:4318/v1/traces',
    );
  });

  it('the traces-specific endpoint is used as given, headers are parsed, service name defaults to gantry', () => {
    const o = otlpFromEnv({
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://c/custom',
      OTEL_EXPORTER_OTLP_HEADERS: 'Authorization=Bearer%20x, x-tenant = t1,broken',
    });
    expect(o).toEqual({
      url: 'http://c/custom',
      headers: { authorization: 'Bearer x', 'x-tenant': 't1' },
      serviceName: 'gantry',
    });
  });
});

describe('OtlpTracer.begin (parent-based sampling)', () => {
  const tracer = new OtlpTracer({ url: 'http://127.0.0.1:9/v1/traces' });
  const incoming = {
    traceId: '4bf92f3577b34da6a3ce929d0e0e4736',
    parentId: '00f067aa0ba902b7',
    spanId: undefined,
    flags: 1,
    state: undefined,
  };

  it('continues a sampled caller trace with a new span of its own', () => {
    const t = tracer.begin(incoming);
    expect(t.traceId).toBe(incoming.traceId);
    expect(t.parentId).toBe(incoming.parentId);
    expect(t.spanId).toMatch(/^[0-9a-f]{16}$/);
  });

  it('starts a new sampled trace when the caller sent none', () => {
    const t = tracer.begin(undefined);
    expect(t.traceId).toMatch(/^[0-9a-f]{32}$/);
    expect(t.parentId).toBeUndefined();
    expect(t.flags).toBe(1);
  });

  it('records nothing for a caller that did not sample its trace', () => {
    const unsampled = { ...incoming, flags: 0 };
    expect(tracer.begin(unsampled)).toBe(unsampled);
  });
});
