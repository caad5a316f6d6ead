/**
 * Minting Realtime client secrets: the request's checks and the answers in OpenAI's shapes
 * (GA `/v1/realtime/client_secrets`, beta `/v1/realtime/sessions`). The secret is Gantry's own
 * (`ek_gty_…`), honoured only by Gantry's /v1/realtime; the upstream key never leaves the gateway.
 */
import { randomBytes } from 'node:crypto';
import { GatewayError, invalidParam } from '../errors.ts';
import { checkModelName } from '../server/model-name.ts';
import { isRecord } from './events.ts';
import { unmeteredReason, unmeteredSessionField } from './session-policy.ts';

export const SECRET_PREFIX = 'ek_gty_';
/** OpenAI's bounds and defaults for `expires_after.seconds` (GA) and the beta's one minute. */
export const MIN_SECRET_SECONDS = 10;
export const MAX_SECRET_SECONDS = 7_200;
export const DEFAULT_SECRET_SECONDS = 600;
export const BETA_SECRET_SECONDS = 60;
/**
 * A secret's session configuration is kept for up to two hours: bounded to what a real one
 * needs (instructions, tools, voice), not the request body limit.
 */
export const MAX_SECRET_SESSION_BYTES = 16 * 1024;
/** Live secrets one key may hold at once, so minting cannot fill the store. */
export const MAX_SECRETS_PER_KEY = 100;

export const newSecret = (): string => SECRET_PREFIX + randomBytes(24).toString('base64url');
export const isClientSecret = (key: string): boolean => key.startsWith(SECRET_PREFIX);

export interface MintRequest {
  model: string;
  /** The session configuration without `model` and `type` (those are the secret's). */
  session: Record<string, unknown>;
  seconds: number;
}

/** GA body: `{expires_after?: {anchor?, seconds?}, session: {type?, model, …}}`. */
export function mintRequest(body: unknown): MintRequest {
  if (!isRecord(body)) throw invalidParam('body', 'must be a JSON object');
  const expires = body.expires_after;
  let seconds = DEFAULT_SECRET_SECONDS;
  if (expires !== undefined) {
    if (!isRecord(expires)) throw invalidParam('expires_after', 'must be an object');
    if (expires.anchor !== undefined && expires.anchor !== 'created_at')
      throw invalidParam('expires_after.anchor', 'only created_at is supported');
    if (expires.seconds !== undefined) {
      const s = expires.seconds;
      if (typeof s !== 'number' || !Number.isInteger(s) || s < MIN_SECRET_SECONDS || s > MAX_SECRET_SECONDS)
        throw invalidParam(
          'expires_after.seconds',
          `must be an integer from ${MIN_SECRET_SECONDS} to ${MAX_SECRET_SECONDS}`,
        );
      seconds = s;
    }
  }
  if (!isRecord(body.session))
    throw invalidParam('session', 'required: the session configuration, with its model');
  return { ...sessionParts(body.session, 'session'), seconds };
}

/** Beta body: the session itself, `{model, modalities, …}`, always one minute. */
export function betaMintRequest(body: unknown): MintRequest {
  if (!isRecord(body)) throw invalidParam('body', 'must be a JSON object');
  return { ...sessionParts(body, ''), seconds: BETA_SECRET_SECONDS };
}

function sessionParts(session: Record<string, unknown>, at: string): Omit<MintRequest, 'seconds'> {
  const field = (name: string) => (at ? `${at}.${name}` : name);
  const unmetered = unmeteredSessionField(session);
  if (unmetered !== undefined) {
    const name = field(unmetered);
    throw new GatewayError('invalid_request_error', `${name}: ${unmeteredReason(unmetered)}`, {
      param: name,
    });
  }
  if (typeof session.model !== 'string' || session.model === '')
    throw invalidParam(field('model'), 'required: the model the secret may open');
  checkModelName(field('model'), session.model);
  const { model, type: _type, ...rest } = session;
  const bytes = Buffer.byteLength(JSON.stringify(rest));
  if (bytes > MAX_SECRET_SESSION_BYTES)
    throw invalidParam(
      at || 'session',
      `the session configuration is ${bytes} bytes of JSON, more than the ${MAX_SECRET_SESSION_BYTES} a client secret keeps; ` +
        'send large settings with session.update once connected',
    );
  return { model, session: rest };
}

export function gaAnswer(value: string, expiresAt: number, model: string, session: Record<string, unknown>) {
  const expires_at = Math.floor(expiresAt / 1000);
  return {
    value,
    expires_at,
    session: { type: 'realtime', object: 'realtime.session', ...session, model },
  };
}

export function betaAnswer(
  value: string,
  expiresAt: number,
  model: string,
  session: Record<string, unknown>,
) {
  return {
    object: 'realtime.session',
    ...session,
    model,
    client_secret: { value, expires_at: Math.floor(expiresAt / 1000) },
  };
}
