/**
 * Realtime client secrets Gantry mints (`POST /v1/realtime/client_secrets`): short-lived
 * credentials a browser may hold instead of an API key. Stored under the SHA-256 of the
 * secret (like API keys, the secret itself is never kept), naming the key that minted it, the
 * one model it opens, and the session configuration applied when it connects.
 */
export interface ClientSecret {
  tenant: string;
  keyId: string;
  /** SHA-256 (hex) of the API key that minted it: a revoked or rotated key revokes its secrets. */
  keyHash: string;
  model: string;
  /** `session` of the mint request, sent upstream as a `session.update` on connect. */
  session: Record<string, unknown>;
  /** Epoch milliseconds. */
  expiresAt: number;
}

export interface ClientSecretStore {
  /**
   * Stores the secret unless the key that minted it already holds `maxPerKey` live (unexpired)
   * secrets: then nothing is stored and the answer is false. Bounds what one key can park in the store.
   */
  put(hash: string, secret: ClientSecret, maxPerKey: number): Promise<boolean>;
  /** The secret while it is valid; undefined once expired or never minted. */
  get(hash: string): Promise<ClientSecret | undefined>;
}
