import { describe, expect, it } from 'vitest';
import {
  idsOfResult,
  MAX_REFERENCE_TASK_IDS,
  readSendCall,
  RpcCodes,
  RpcError,
  type SendCall,
} from './jsonrpc.ts';
import { namedIds } from './run.ts';
import { MemoryOwnedStore } from '../../stores/owned/memory.ts';
import { A2aOwnership } from './owners.ts';

const code = (body: unknown): number | undefined => {
  try {
    readSendCall(body);
    return undefined;
  } catch (err) {
    return err instanceof RpcError ? err.code : -1;
  }
};

const ok = {
  jsonrpc: '2.0',
  id: 'a',
  method: 'message/send',
  params: { message: { role: 'user', messageId: 'm', parts: [{ kind: 'text', text: 'hi' }] } },
};

describe('a2a JSON-RPC envelope', () => {
  it('accepts message/send with kind or type parts', () => {
    expect(code(ok)).toBeUndefined();
    expect(
      code({ ...ok, params: { message: { ...ok.params.message, parts: [{ type: 'text', text: 'x' }] } } }),
    ).toBeUndefined();
  });

  it('answers each malformed call with the protocol code', () => {
    expect(code([])).toBe(RpcCodes.invalidRequest);
    expect(code({ ...ok, id: { x: 1 } })).toBe(RpcCodes.invalidRequest);
    expect(code({ ...ok, method: 'message/stream' })).toBe(RpcCodes.methodNotFound);
    expect(code({ ...ok, params: {} })).toBe(RpcCodes.invalidParams);
    expect(code({ ...ok, params: { message: { ...ok.params.message, role: 'system' } } })).toBe(
      RpcCodes.invalidParams,
    );
    expect(code({ ...ok, params: { message: { ...ok.params.message, taskId: 5 } } })).toBe(
      RpcCodes.invalidParams,
    );
  });

  it('caps referenceTaskIds, naming the field and the limit', () => {
    const withRefs = (refs: unknown) => ({
      ...ok,
      params: { message: { ...ok.params.message, referenceTaskIds: refs } },
    });
    expect(code(withRefs(Array(MAX_REFERENCE_TASK_IDS).fill('t')))).toBeUndefined();
    expect(code(withRefs('t'))).toBe(RpcCodes.invalidParams);
    expect(code(withRefs([1]))).toBe(RpcCodes.invalidParams);
    let message = '';
    try {
      readSendCall(withRefs(Array(300_000).fill('t')));
    } catch (err) {
      expect(err).toBeInstanceOf(RpcError);
      message = (err as RpcError).message;
    }
    expect(message).toContain('params.message.referenceTaskIds');
    expect(message).toContain(`at most ${MAX_REFERENCE_TASK_IDS}`);
  });

  it('names each referenced task once for the ownership check', () => {
    const message: SendCall['params']['message'] = {
      ...(ok.params.message as SendCall['params']['message']),
      taskId: 't1',
      contextId: 'c1',
      referenceTaskIds: ['t2', 't1', 't2', 't3', 't2'],
    };
    expect(namedIds(message)).toEqual([
      ['task', 't1'],
      ['task', 't2'],
      ['task', 't3'],
      ['context', 'c1'],
    ]);
  });

  it('finds task and context ids in a Task and in a Message', () => {
    expect(idsOfResult({ kind: 'task', id: 't', contextId: 'c' })).toEqual({ taskId: 't', contextId: 'c' });
    expect(idsOfResult({ kind: 'message', taskId: 't' })).toEqual({ taskId: 't' });
    expect(idsOfResult('nope')).toEqual({});
  });
});

describe('a2a ownership', () => {
  const a = { tenant: 'acme', keyId: 'k1' };
  const b = { tenant: 'acme', keyId: 'k2' };

  it("belongs to the claiming owner, per agent and kind; unseen ids are nobody's", async () => {
    const owners = new A2aOwnership(new MemoryOwnedStore<true>());
    await owners.claim('agent', 'task', 't1', a);
    expect(await owners.owns('agent', 'task', 't1', a)).toBe(true);
    expect(await owners.owns('agent', 'task', 't1', b)).toBe(false);
    expect(await owners.owns('other-agent', 'task', 't1', a)).toBe(false);
    expect(await owners.owns('agent', 'context', 't1', a)).toBe(false);
    expect(await owners.owns('agent', 'task', 'never', a)).toBe(false);
  });
});
