import type { OversizedRecord } from '../size-head.ts';

/**
 * Objects that belong to the tenant and API key that created them (interactions, RAG
 * documents): a lookup under any other owner finds nothing, exactly like an unknown id.
 */
export interface Owner {
  tenant: string;
  /** ApiKey `namespace/name`. */
  keyId: string;
}

export interface OwnedStore<T> {
  put(owner: Owner, id: string, value: T): Promise<void>;
  /** Stores the object only when the owner has none with this id, atomically; true when it did. */
  putIfAbsent(owner: Owner, id: string, value: T): Promise<boolean>;
  get(owner: Owner, id: string): Promise<T | undefined>;
  /** Stores JSON the caller serialised itself (it must parse to a T), for a layout of its own. */
  putJson(owner: Owner, id: string, json: string): Promise<void>;
  /**
   * As `get`, but when the object's JSON opens with a conversation size (size-head.ts) past
   * `maxConversationBytes`, only that size, read without loading or parsing the object.
   */
  getWithin(owner: Owner, id: string, maxConversationBytes: number): Promise<T | OversizedRecord | undefined>;
  /** True when the owner had an object with this id. */
  delete(owner: Owner, id: string): Promise<boolean>;
}

/** NUL cannot occur in tenant names or key ids. */
export const ownedKey = (owner: Owner, id: string): string =>
  `${owner.tenant}\u0000${owner.keyId}\u0000${id}`;
