import { describe, expect, it } from 'vitest';
import type { ChatRequest } from '../formats/openai/types.ts';
import { testDeployment } from '../router/testing.ts';
import { ClientAbortError, classifyUpstreamFailure, UpstreamFailure } from '../router/upstream.ts';
import type { RequestContext } from './context.ts';
import { unitsCharge } from './media/run.ts';
import { abandonedOutcome, chatPromptCharge, watchSent } from './unanswered-call.ts';

const REQ: ChatRequest = { model: 'm', messages: [{ role: 'user', content: 'hi' }] };

/** Just what watchSent reads and writes: the client's signal and the call on the wire. */
function context(aborted: boolean): RequestContext {
  const controller = new AbortController();
  if (aborted) controller.abort();
  return { signal: controller.signal, unanswered: undefined } as unknown as RequestContext;
}

/** An attempt that goes on the wire, then fails with `err`. */
async function attempt(ctx: RequestContext, err: Error): Promise<void> {
  const run = watchSent(ctx, chatPromptCharge(ctx, REQ), async (_d, sent) => {
    sent?.();
    throw err;
  });
  await expect(run(testDeployment())).rejects.toBe(err);
}

describe('an abandoned call is charged only when something may have reached the provider', () => {
  it('the client left while the call was out: the call stays named for the 499 charge', async () => {
    const ctx = context(true);
    await attempt(ctx, new ClientAbortError());
    expect(ctx.unanswered?.deployment.name).toBe(testDeployment().name);
  });

  it('the client left and the connection then failed to open: nothing is charged', async () => {
    const ctx = context(true);
    await attempt(ctx, new ClientAbortError(true));
    expect(ctx.unanswered).toBeUndefined();
  });

  it.each([429, 400, 503])(
    'the provider refused with %s as the client left: answered, billed nothing, charged nothing',
    async (status) => {
      const ctx = context(true);
      await attempt(ctx, new UpstreamFailure({ kind: 'server', status, message: 'no' }, true));
      expect(abandonedOutcome(ctx)).toBeUndefined();
    },
  );

  it('a 200 whose body broke as the client left is not a refusal: still charged', async () => {
    const ctx = context(true);
    await attempt(ctx, new UpstreamFailure({ kind: 'server', status: 200, message: 'invalid JSON' }));
    expect(ctx.unanswered?.deployment.name).toBe(testDeployment().name);
  });

  it('an attempt failing on its own (the router may fail over) is never the client’s to pay', async () => {
    const ctx = context(false);
    await attempt(ctx, new UpstreamFailure({ kind: 'network', status: 0, message: 'reset' }));
    expect(ctx.unanswered).toBeUndefined();
  });

  it('the answer arrived as the client left: only the answer is charged, not the abandoned call too', async () => {
    const ctx = context(true);
    const run = watchSent(ctx, chatPromptCharge(ctx, REQ), async (_d, sent) => {
      sent?.();
      return 'answer';
    });
    await expect(run(testDeployment())).resolves.toBe('answer');
    expect(abandonedOutcome(ctx)).toBeUndefined();
  });

  it('a route’s own charge is worked out at the deployment that had the call (6 image units)', async () => {
    const ctx = context(true);
    const priced = testDeployment({
      name: 'img',
      pricing: { inputPerMillionTokens: 0, outputPerMillionTokens: 0, perImage: 0.04 },
    });
    const run = watchSent(ctx, unitsCharge('perImage', 6), async (_d, sent) => {
      sent?.();
      throw new ClientAbortError();
    });
    await expect(run(priced)).rejects.toBeInstanceOf(ClientAbortError);
    expect(abandonedOutcome(ctx)).toMatchObject({ status: 499, deployment: { name: 'img' }, costUsd: 0.24 });
  });

  it.each([
    ['ECONNREFUSED', true],
    ['ENOTFOUND', true],
    ['ECONNRESET', false],
    [undefined, false],
  ])('a client gone with the upstream error %s is an abort, unsent: %s', (code, unsent) => {
    const err = Object.assign(new Error('x'), code === undefined ? {} : { code });
    const failure = classifyUpstreamFailure(err, AbortSignal.abort());
    expect(failure).toBeInstanceOf(ClientAbortError);
    expect((failure as ClientAbortError).unsent).toBe(unsent);
  });
});
