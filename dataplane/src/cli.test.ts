import { describe, expect, it } from 'vitest';
import {
  DEFAULT_DRAIN_TIMEOUT_MS,
  DEFAULT_JOURNAL_DRAIN_MS,
  DEFAULT_PRE_STOP_MS,
  FLAGS,
  parseCli,
  usage,
} from './cli.ts';
import { DEFAULT_LIMITS } from './server/limits.ts';

const run = (argv: string[], env: Record<string, string> = {}) => {
  const r = parseCli(argv, env);
  if (r.kind !== 'run') throw new Error(`expected options, got ${JSON.stringify(r)}`);
  return r.options;
};
const error = (argv: string[], env: Record<string, string> = {}) => {
  const r = parseCli(argv, env);
  if (r.kind !== 'error') throw new Error(`expected an error, got ${r.kind}`);
  return r.message;
};

describe('parseCli', () => {
  it('has production defaults', () => {
    expect(run([])).toMatchObject({
      config: 'gantry.yaml',
      port: 8080,
      adminPort: 9090,
      fakeProvider: 'auto',
      logLevel: 'info',
      receiveTimeoutMs: 30_000,
      headersTimeoutMs: DEFAULT_LIMITS.headersTimeoutMs,
      keepAliveTimeoutMs: DEFAULT_LIMITS.keepAliveTimeoutMs,
      maxConnections: DEFAULT_LIMITS.maxConnections,
      adminMaxConnections: DEFAULT_LIMITS.adminMaxConnections,
      preStopMs: DEFAULT_PRE_STOP_MS,
      drainTimeoutMs: DEFAULT_DRAIN_TIMEOUT_MS,
    });
  });

  it('leaves an optional setting undefined when unset', () => {
    expect(run([]).journalDir).toBeUndefined();
    expect(run([], { GANTRY_JOURNAL_DIR: '/var/lib/gantry' }).journalDir).toBe('/var/lib/gantry');
    expect(run([]).journalRetryMs).toBe(1000);
    expect(run([]).journalDrainMs).toBe(DEFAULT_JOURNAL_DRAIN_MS);
    expect(run([], { GANTRY_JOURNAL_DRAIN_MS: '0' }).journalDrainMs).toBe(0);
    expect(error(['--journal-drain-ms', 'soon'])).toMatch(/^--journal-drain-ms must be an integer ≥ 0/);
    expect(run([]).batchSweepMs).toBe(60_000);
    expect(run([], { GANTRY_BATCH_SWEEP_MS: '0' }).batchSweepMs).toBe(0);
    expect(error(['--batch-sweep-ms', 'often'])).toMatch(/^--batch-sweep-ms must be a non-negative integer/);
    expect(run([]).snapshotSecret).toBeUndefined();
    expect(run(['--snapshot-secret', 'gantry/snapshot']).snapshotSecret).toBe('gantry/snapshot');
    expect(error(['--snapshot-secret', 'snapshot'])).toBe(
      '--snapshot-secret must be namespace/name, got "snapshot"',
    );
  });

  it('takes the Realtime scan budget per key: 16 MiB characters by default, 1 to 256 Mi', () => {
    expect(run([]).realtimeMaxScannedCharsPerMinute).toBe(16 * 1024 * 1024);
    expect(
      run([], { GANTRY_REALTIME_MAX_SCANNED_CHARS_PER_MINUTE: '1000000' }).realtimeMaxScannedCharsPerMinute,
    ).toBe(1_000_000);
    expect(
      run(['--realtime-max-scanned-chars-per-minute', String(256 * 1024 * 1024)])
        .realtimeMaxScannedCharsPerMinute,
    ).toBe(268_435_456);
    for (const bad of ['0', '268435457', '1e6', '-5', 'lots'])
      expect(error([`--realtime-max-scanned-chars-per-minute=${bad}`])).toBe(
        `--realtime-max-scanned-chars-per-minute must be an integer from 1 to 268435456 (characters), got "${bad}"`,
      );
    expect(error([], { GANTRY_REALTIME_MAX_SCANNED_CHARS_PER_MINUTE: '0' })).toMatch(
      /^GANTRY_REALTIME_MAX_SCANNED_CHARS_PER_MINUTE must be an integer from 1 to 268435456/,
    );
  });

  it('bounds the shutdown store waits: 2 s by default, 1 ms to 10 minutes', () => {
    expect(run([]).storeWaitMs).toBe(2_000);
    expect(run([], { GANTRY_STORE_WAIT_MS: '500' }).storeWaitMs).toBe(500);
    expect(run(['--store-wait-ms', '600000']).storeWaitMs).toBe(600_000);
    for (const bad of ['0', '600001', '1.5', 'soon'])
      expect(error(['--store-wait-ms', bad])).toBe(
        `--store-wait-ms must be an integer from 1 to 600000 (milliseconds), got "${bad}"`,
      );
    expect(error([], { GANTRY_STORE_WAIT_MS: '-1' })).toMatch(
      /^GANTRY_STORE_WAIT_MS must be an integer from 1/,
    );
  });

  it('takes the environment, and a flag over it; an empty variable is unset', () => {
    const env = { GANTRY_PORT: '1234', GANTRY_RECEIVE_TIMEOUT_MS: '5000', GANTRY_ADMIN_PORT: '' };
    expect(run([], env)).toMatchObject({ port: 1234, receiveTimeoutMs: 5000, adminPort: 9090 });
    expect(run(['--port', '4321', '--pre-stop-ms=0'], env)).toMatchObject({ port: 4321, preStopMs: 0 });
  });

  it('rejects malformed numbers, naming the flag or variable and the value', () => {
    expect(error(['--port', 'abc'])).toBe('--port must be an integer from 0 to 65535, got "abc"');
    expect(error(['--port', '65536'])).toMatch(/^--port must be/);
    expect(error(['--max-body-bytes=-1'])).toMatch(/^--max-body-bytes must be a positive integer/);
    expect(error(['--max-body-bytes', '-1'])).toBe(
      "Option '--max-body-bytes' argument is ambiguous (see --help)",
    );
    expect(error(['--drain-timeout-ms', '1.5'])).toMatch(/^--drain-timeout-ms must be/);
    expect(error(['--max-connections', '0'])).toMatch(/^--max-connections must be/);
    expect(error([], { GANTRY_JOURNAL_RETRY_MS: 'soon' })).toMatch(/^GANTRY_JOURNAL_RETRY_MS must be/);
    expect(error([], { GANTRY_HEADERS_TIMEOUT_MS: '10s' })).toBe(
      'GANTRY_HEADERS_TIMEOUT_MS must be a positive integer (milliseconds), got "10s"',
    );
  });

  it('rejects unknown enum values, unknown flags, missing values and positionals', () => {
    expect(error(['--fake-provider', 'bogus'])).toBe('--fake-provider must be one of auto, off, got "bogus"');
    expect(error([], { GANTRY_LOG_LEVEL: 'loud' })).toMatch(/^GANTRY_LOG_LEVEL must be one of fatal/);
    expect(error(['--bogus'])).toBe("Unknown option '--bogus' (see --help)");
    expect(error(['--port'])).toMatch(/^Option '--port <value>' argument missing/);
    expect(error(['extra'])).toMatch(/^Unexpected argument 'extra'/);
    for (const m of [error(['--bogus']), error(['--port']), error(['extra'])]) expect(m).not.toContain('\n');
  });

  it('answers --help and --version before checking anything else', () => {
    expect(parseCli(['--help', '--port', 'abc'], {}).kind).toBe('help');
    expect(parseCli(['-h'], {}).kind).toBe('help');
    expect(parseCli(['--version'], {}).kind).toBe('version');
  });

  it('lists every flag with its variable in the help', () => {
    const text = usage();
    for (const [name, flag] of Object.entries(FLAGS)) {
      expect(text).toContain(`--${name}`);
      expect(text).toContain(flag.env);
    }
  });
});
