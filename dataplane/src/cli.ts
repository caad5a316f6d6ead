/**
 * The command line and environment of `gantry`: every flag, its variable, its default and
 * its check, in one table. Parsing is pure, so a bad value is a one-line message (and exit
 * code 2) before anything starts.
 */
import { parseArgs } from 'node:util';
import { DEFAULT_BODY_LIMIT, DEFAULT_LIMITS } from './server/limits.ts';
import { DEFAULT_MAX_UPLOAD_BYTES } from './server/routes/media-scope.ts';
import { DEFAULT_REALTIME_LIMITS, MAX_SCANNED_CHARS_PER_MINUTE_CEILING } from './realtime/limits.ts';
import { DEFAULT_STORE_WAIT_MS, MAX_STORE_WAIT_MS } from './shutdown-wait.ts';

export const FAKE_PROVIDER_MODES = ['auto', 'off'] as const;
export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

export interface CliOptions {
  config: string;
  snapshotSecret: string | undefined;
  host: string;
  port: number;
  adminHost: string;
  adminPort: number;
  fakeProvider: (typeof FAKE_PROVIDER_MODES)[number];
  logLevel: (typeof LOG_LEVELS)[number];
  maxBodyBytes: number;
  maxUploadBytes: number;
  realtimeMaxMessageBytes: number;
  realtimeMaxSessionMs: number;
  realtimeIdleTimeoutMs: number;
  realtimeMaxSessionsPerKey: number;
  realtimeMaxScannedCharsPerMinute: number;
  receiveTimeoutMs: number;
  headersTimeoutMs: number;
  keepAliveTimeoutMs: number;
  maxConnections: number;
  adminMaxConnections: number;
  maxPipelinedRequests: number;
  preStopMs: number;
  drainTimeoutMs: number;
  journalDir: string | undefined;
  journalRetryMs: number;
  journalDrainMs: number;
  storeWaitMs: number;
  batchSweepMs: number;
}

export type CliResult =
  | { kind: 'run'; options: CliOptions }
  | { kind: 'help'; text: string }
  | { kind: 'version' }
  | { kind: 'error'; message: string };

type Check = (raw: string) => string | number | undefined;

interface Flag {
  key: keyof CliOptions;
  env: string;
  fallback: string;
  /** Shown in --help after the flag. */
  help: string;
  /** The parsed value, or undefined when `raw` is not acceptable. */
  check: Check;
  /** What an acceptable value is, for the error message. */
  expects: string;
  /** Unset (empty fallback) is allowed and leaves the option undefined. */
  optional?: boolean;
}

const text: Check = (raw) => (raw === '' ? undefined : raw);
const integer =
  (min: number, max = Number.MAX_SAFE_INTEGER): Check =>
  (raw) => {
    if (!/^\d+$/.test(raw)) return undefined;
    const n = Number(raw);
    return n >= min && n <= max ? n : undefined;
  };
const oneOf =
  (values: readonly string[]): Check =>
  (raw) =>
    values.includes(raw) ? raw : undefined;

/**
 * The chart's 70 s termination grace is pre-stop + drain + the journal's drain + time to
 * close the stores and exit (5 s, which the two store waits of 2 s fit in).
 */
export const DEFAULT_PRE_STOP_MS = 5_000;
export const DEFAULT_DRAIN_TIMEOUT_MS = 50_000;
export const DEFAULT_JOURNAL_DRAIN_MS = 10_000;

const port = { check: integer(0, 65_535), expects: 'an integer from 0 to 65535' };
const ms = { check: integer(1), expects: 'a positive integer (milliseconds)' };

export const FLAGS: Record<string, Flag> = {
  config: {
    key: 'config',
    env: 'GANTRY_CONFIG',
    fallback: 'gantry.yaml',
    help: 'manifests file',
    check: text,
    expects: 'a file path',
  },
  'snapshot-secret': {
    key: 'snapshotSecret',
    env: 'GANTRY_SNAPSHOT_SECRET',
    fallback: '',
    help: 'in a cluster: namespace/name of the Secret the operator publishes the snapshot into',
    check: (raw) => (/^[^/\s]+\/[^/\s]+$/.test(raw) ? raw : undefined),
    expects: 'namespace/name',
    optional: true,
  },
  host: {
    key: 'host',
    env: 'GANTRY_HOST',
    fallback: '0.0.0.0',
    help: 'API listen address',
    check: text,
    expects: 'an address',
  },
  port: { key: 'port', env: 'GANTRY_PORT', fallback: '8080', help: 'API port', ...port },
  'admin-host': {
    key: 'adminHost',
    env: 'GANTRY_ADMIN_HOST',
    fallback: '0.0.0.0',
    help: 'health/metrics listen address',
    check: text,
    expects: 'an address',
  },
  'admin-port': {
    key: 'adminPort',
    env: 'GANTRY_ADMIN_PORT',
    fallback: '9090',
    help: 'health/metrics port',
    ...port,
  },
  'fake-provider': {
    key: 'fakeProvider',
    env: 'GANTRY_FAKE_PROVIDER',
    fallback: 'auto',
    help: 'auto: serve deployments without a credential from the built-in fake; off: such a deployment is an error',
    check: oneOf(FAKE_PROVIDER_MODES),
    expects: `one of ${FAKE_PROVIDER_MODES.join(', ')}`,
  },
  'log-level': {
    key: 'logLevel',
    env: 'GANTRY_LOG_LEVEL',
    fallback: 'info',
    help: 'log level',
    check: oneOf(LOG_LEVELS),
    expects: `one of ${LOG_LEVELS.join(', ')}`,
  },
  'max-body-bytes': {
    key: 'maxBodyBytes',
    env: 'GANTRY_MAX_BODY_BYTES',
    fallback: String(DEFAULT_BODY_LIMIT),
    help: 'largest request body',
    check: integer(1),
    expects: 'a positive integer (bytes)',
  },
  'max-upload-bytes': {
    key: 'maxUploadBytes',
    env: 'GANTRY_MAX_UPLOAD_BYTES',
    fallback: String(DEFAULT_MAX_UPLOAD_BYTES),
    help: 'largest file a media upload (images, audio, video reference) may carry (413 above)',
    check: integer(1),
    expects: 'a positive integer (bytes)',
  },
  'realtime-max-message-bytes': {
    key: 'realtimeMaxMessageBytes',
    env: 'GANTRY_REALTIME_MAX_MESSAGE_BYTES',
    fallback: String(DEFAULT_REALTIME_LIMITS.maxMessageBytes),
    help: 'largest message a Realtime client may send (the session closes with 1009 above)',
    check: integer(1),
    expects: 'a positive integer (bytes)',
  },
  'realtime-max-session-ms': {
    key: 'realtimeMaxSessionMs',
    env: 'GANTRY_REALTIME_MAX_SESSION_MS',
    fallback: String(DEFAULT_REALTIME_LIMITS.maxSessionMs),
    help: 'a Realtime session is closed (1008) this long after it opened',
    ...ms,
  },
  'realtime-idle-timeout-ms': {
    key: 'realtimeIdleTimeoutMs',
    env: 'GANTRY_REALTIME_IDLE_TIMEOUT_MS',
    fallback: String(DEFAULT_REALTIME_LIMITS.idleTimeoutMs),
    help: 'a Realtime session without a message either way this long is closed (1008)',
    ...ms,
  },
  'realtime-max-sessions-per-key': {
    key: 'realtimeMaxSessionsPerKey',
    env: 'GANTRY_REALTIME_MAX_SESSIONS_PER_KEY',
    fallback: String(DEFAULT_REALTIME_LIMITS.maxSessionsPerKey),
    help: 'open Realtime sessions one API key may hold per pod (429 before the upgrade above)',
    check: integer(1),
    expects: 'a positive integer',
  },
  'realtime-max-scanned-chars-per-minute': {
    key: 'realtimeMaxScannedCharsPerMinute',
    env: 'GANTRY_REALTIME_MAX_SCANNED_CHARS_PER_MINUTE',
    fallback: String(DEFAULT_REALTIME_LIMITS.maxScannedCharsPerMinute),
    help: "characters of client text one API key's Realtime sessions may have the guardrails scan per minute per pod (an event past it: 429, unscanned)",
    check: integer(1, MAX_SCANNED_CHARS_PER_MINUTE_CEILING),
    expects: `an integer from 1 to ${MAX_SCANNED_CHARS_PER_MINUTE_CEILING} (characters)`,
  },
  'receive-timeout-ms': {
    key: 'receiveTimeoutMs',
    env: 'GANTRY_RECEIVE_TIMEOUT_MS',
    fallback: String(DEFAULT_LIMITS.receiveTimeoutMs),
    help: 'a request not fully received by then is closed (408)',
    ...ms,
  },
  'headers-timeout-ms': {
    key: 'headersTimeoutMs',
    env: 'GANTRY_HEADERS_TIMEOUT_MS',
    fallback: String(DEFAULT_LIMITS.headersTimeoutMs),
    help: 'request headers not received by then: closed',
    ...ms,
  },
  'keep-alive-timeout-ms': {
    key: 'keepAliveTimeoutMs',
    env: 'GANTRY_KEEP_ALIVE_TIMEOUT_MS',
    fallback: String(DEFAULT_LIMITS.keepAliveTimeoutMs),
    help: 'idle keep-alive connections are closed after this',
    ...ms,
  },
  'max-connections': {
    key: 'maxConnections',
    env: 'GANTRY_MAX_CONNECTIONS',
    fallback: String(DEFAULT_LIMITS.maxConnections),
    help: 'open API connections at most (keep below the file limit)',
    check: integer(1),
    expects: 'a positive integer',
  },
  'admin-max-connections': {
    key: 'adminMaxConnections',
    env: 'GANTRY_ADMIN_MAX_CONNECTIONS',
    fallback: String(DEFAULT_LIMITS.adminMaxConnections),
    help: 'open admin-port connections at most (probes, metrics)',
    check: integer(1),
    expects: 'a positive integer',
  },
  'max-pipelined-requests': {
    key: 'maxPipelinedRequests',
    env: 'GANTRY_MAX_PIPELINED_REQUESTS',
    fallback: String(DEFAULT_LIMITS.maxPipelinedRequests),
    help: 'requests one API connection may have unanswered (pipelined); more get a 429',
    check: integer(1),
    expects: 'a positive integer',
  },
  'pre-stop-ms': {
    key: 'preStopMs',
    env: 'GANTRY_PRE_STOP_MS',
    fallback: String(DEFAULT_PRE_STOP_MS),
    help: 'on SIGTERM, readiness fails and requests are still served this long',
    check: integer(0),
    expects: 'an integer ≥ 0 (milliseconds)',
  },
  'drain-timeout-ms': {
    key: 'drainTimeoutMs',
    env: 'GANTRY_DRAIN_TIMEOUT_MS',
    fallback: String(DEFAULT_DRAIN_TIMEOUT_MS),
    help: 'then in-flight requests may finish this long; open streams end with an error event',
    ...ms,
  },
  'journal-dir': {
    key: 'journalDir',
    env: 'GANTRY_JOURNAL_DIR',
    fallback: '',
    help: 'settlement journal directory (default <tmpdir>/gantry-journal-<port>; what is left in it at exit is replayed only by a gateway started on the same directory)',
    check: text,
    expects: 'a directory path',
    optional: true,
  },
  'journal-retry-ms': {
    key: 'journalRetryMs',
    env: 'GANTRY_JOURNAL_RETRY_MS',
    fallback: '1000',
    help: 'delay between journal replays while Redis is unreachable',
    ...ms,
  },
  'journal-drain-ms': {
    key: 'journalDrainMs',
    env: 'GANTRY_JOURNAL_DRAIN_MS',
    fallback: String(DEFAULT_JOURNAL_DRAIN_MS),
    help: 'on shutdown, after the drain, journaled settlements keep being replayed this long; what is left stays in the journal directory and is logged (0: none)',
    check: integer(0),
    expects: 'an integer ≥ 0 (milliseconds)',
  },
  'store-wait-ms': {
    key: 'storeWaitMs',
    env: 'GANTRY_STORE_WAIT_MS',
    fallback: String(DEFAULT_STORE_WAIT_MS),
    help: "on shutdown, the longest wait for each of: settlements the stores have not acknowledged, then the usage recorder's last flush; what is left is logged",
    check: integer(1, MAX_STORE_WAIT_MS),
    expects: `an integer from 1 to ${MAX_STORE_WAIT_MS} (milliseconds)`,
  },
  'batch-sweep-ms': {
    key: 'batchSweepMs',
    env: 'GANTRY_BATCH_SWEEP_MS',
    fallback: '60000',
    help: 'pause between sweeps that charge batches and fine-tuning jobs finished upstream but never read again (0: off)',
    check: integer(0),
    expects: 'a non-negative integer (milliseconds)',
  },
};

export function usage(): string {
  const lines = Object.entries(FLAGS).map(
    ([name, f]) =>
      `  ${`--${name}`.padEnd(24)} ${f.help} (${f.env}${f.fallback ? `, default ${f.fallback}` : ''})`,
  );
  return [
    'Usage: gantry [options]',
    '',
    'Gantry data plane: an OpenAI- and Anthropic-compatible model gateway.',
    '',
    'Options (each also read from the environment variable named):',
    ...lines,
    `  ${'--help, -h'.padEnd(24)} show this help`,
    `  ${'--version'.padEnd(24)} print the version`,
    '',
  ].join('\n');
}

/** parseArgs's messages run on, over lines, with advice; the first sentence is the point. */
function firstSentence(message: string): string {
  return (message.split(/\.(?:\s|$)/, 1)[0] ?? message).trim();
}

export function parseCli(
  argv: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
): CliResult {
  let values: Record<string, string | boolean | undefined>;
  try {
    const options = Object.fromEntries(Object.keys(FLAGS).map((name) => [name, { type: 'string' as const }]));
    ({ values } = parseArgs({
      args: [...argv],
      options: { ...options, help: { type: 'boolean', short: 'h' }, version: { type: 'boolean' } },
      strict: true,
      allowPositionals: false,
    }));
  } catch (err) {
    return { kind: 'error', message: `${firstSentence((err as Error).message)} (see --help)` };
  }
  if (values.help) return { kind: 'help', text: usage() };
  if (values.version) return { kind: 'version' };

  const parsed: Record<string, string | number> = {};
  for (const [name, flag] of Object.entries(FLAGS)) {
    const fromFlag = values[name];
    // An empty variable (a blank Helm value) counts as unset.
    const raw = typeof fromFlag === 'string' ? fromFlag : env[flag.env] || flag.fallback;
    if (raw === '' && flag.optional) continue;
    const value = flag.check(raw.trim());
    if (value === undefined) {
      const source = typeof fromFlag === 'string' ? `--${name}` : flag.env;
      return { kind: 'error', message: `${source} must be ${flag.expects}, got ${JSON.stringify(raw)}` };
    }
    parsed[flag.key] = value;
  }
  return { kind: 'run', options: parsed as unknown as CliOptions };
}
