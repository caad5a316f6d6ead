/** Stored Responses chains made to measure, and the bytes Redis sends while reading them. */
import type { Redis } from 'ioredis';
import type OpenAI from 'openai';

/** Two turns of `big` text chained with previous_response_id; the second turn's id. */
export async function longChain(client: OpenAI, big: (turn: number) => string): Promise<string> {
  const first = await client.responses.create({ model: 'gpt-test', input: big(0) });
  const second = await client.responses.create({
    model: 'gpt-test',
    previous_response_id: first.id,
    input: big(1),
  });
  return second.id;
}

/** Bytes a Redis server has sent to its clients so far (INFO stats). */
export const redisBytesSent = async (redis: Redis): Promise<number> =>
  Number(/total_net_output_bytes:(\d+)/.exec(await redis.info('stats'))?.[1]);
