/**
 * Stored responses in Redis, shared by every pod: one JSON string per response, expiring
 * after `ttlMs` (Redis' maxmemory policy bounds the total). The key holds the tenant (hash
 * tag, like every tenant key), the key hash and the id, so another owner's lookup reads a
 * different key and finds nothing.
 */
import type { Redis } from 'ioredis';
import { toStoreError } from '../redis/client.ts';
import type { KeySpace } from '../redis/keys.ts';
import { bindScript, type BoundScript } from '../redis/script.ts';
import { DEFAULT_RESPONSE_TTL_MS } from './memory.ts';
import type { ResponseObject } from '../../formats/responses/types.ts';
import { bindGetWithin, type GetWithin } from '../redis/get-within.ts';
import { encodeRecord, parseResponse, RECORD_HEAD_CHARS } from './record.ts';
import type { OversizedResponse, ResponseOwner, ResponseStore, StoredResponse } from './types.ts';

// ARGV: head length. {1, the response's JSON} when the head says where it lies, else
// {0, the whole entry} (an entry stored before it did); false when there is none.
const GET_RESPONSE_LUA = `
local head = redis.call('GETRANGE', KEYS[1], 0, tonumber(ARGV[1]) - 1)
if head == '' then return false end
local _, last, chars = string.find(head, '^{"conversationBytes":%d+,"responseChars":(%d+),"response":')
if not last then return {0, redis.call('GET', KEYS[1])} end
return {1, redis.call('GETRANGE', KEYS[1], last, last + tonumber(chars) - 1)}`;

export class RedisResponseStore implements ResponseStore {
  private readonly readWithin: GetWithin;
  private readonly getResponseScript: BoundScript;

  constructor(
    private readonly redis: Redis,
    private readonly keys: KeySpace,
    private readonly ttlMs = DEFAULT_RESPONSE_TTL_MS,
  ) {
    this.readWithin = bindGetWithin(redis, 'responses.get');
    this.getResponseScript = bindScript(
      redis,
      { name: 'gantryResponseGetResponse', numberOfKeys: 1, lua: GET_RESPONSE_LUA },
      'responses.get',
    );
  }

  private key(owner: ResponseOwner, id: string): string {
    return `${this.keys.tenant(owner.tenant)}:resp:${owner.keyHash}:${encodeURIComponent(id)}`;
  }

  async put(owner: ResponseOwner, entry: StoredResponse): Promise<void> {
    await this.redis
      .set(this.key(owner, entry.response.id), encodeRecord(entry), 'PX', this.ttlMs)
      .catch((err: unknown) => {
        throw toStoreError('responses.put', err);
      });
  }

  async get(owner: ResponseOwner, id: string): Promise<StoredResponse | undefined> {
    const text = await this.redis.get(this.key(owner, id)).catch((err: unknown) => {
      throw toStoreError('responses.get', err);
    });
    return text === null ? undefined : (JSON.parse(text) as StoredResponse);
  }

  async getWithin(
    owner: ResponseOwner,
    id: string,
    maxConversationBytes: number,
  ): Promise<StoredResponse | OversizedResponse | undefined> {
    const reply = await this.readWithin(this.key(owner, id), maxConversationBytes);
    return typeof reply === 'string' ? (JSON.parse(reply) as StoredResponse) : reply;
  }

  async getResponse(owner: ResponseOwner, id: string): Promise<ResponseObject | undefined> {
    const reply = (await this.getResponseScript([this.key(owner, id)], [RECORD_HEAD_CHARS])) as
      [number, string] | null;
    if (reply === null) return undefined;
    const [alone, json] = reply;
    return alone === 1 ? parseResponse(json) : (JSON.parse(json) as StoredResponse).response;
  }

  async delete(owner: ResponseOwner, id: string): Promise<boolean> {
    const removed = await this.redis.del(this.key(owner, id)).catch((err: unknown) => {
      throw toStoreError('responses.delete', err);
    });
    return removed > 0;
  }
}
