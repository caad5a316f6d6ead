/**
 * The A2A protocol's JSON-RPC 2.0 envelope for `message/send`, checked at the edge. A body
 * that is not a valid call of that method is answered the protocol's way: HTTP 200 with a
 * JSON-RPC error object (standard codes, and A2A's own for tasks), echoing the call's id.
 * Pure.
 */

export type JsonRpcId = string | number | null;

/** JSON-RPC 2.0 and A2A error codes Gantry answers with. */
export const RpcCodes = {
  invalidRequest: -32600,
  methodNotFound: -32601,
  invalidParams: -32602,
  /** A2A: the task does not exist (or, here, belongs to someone else). */
  taskNotFound: -32001,
} as const;

export interface RpcErrorBody {
  jsonrpc: '2.0';
  id: JsonRpcId;
  error: { code: number; message: string; data?: unknown };
}

export class RpcError extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly id: JsonRpcId,
  ) {
    super(message);
  }

  toBody(): RpcErrorBody {
    return { jsonrpc: '2.0', id: this.id, error: { code: this.code, message: this.message } };
  }
}

export interface A2aPart {
  /** `kind` in A2A 0.3; `type` in earlier drafts. Both are read. */
  kind?: string;
  type?: string;
  text?: string;
  [field: string]: unknown;
}

export interface A2aMessage {
  role: 'user' | 'agent';
  parts: A2aPart[];
  messageId: string;
  taskId?: string;
  contextId?: string;
  referenceTaskIds?: string[];
  [field: string]: unknown;
}

export interface SendCall {
  jsonrpc: '2.0';
  id: JsonRpcId;
  method: 'message/send';
  params: { message: A2aMessage; [field: string]: unknown };
}

/** Parts per message: far above any real conversation turn, far below a memory problem. */
export const MAX_PARTS = 256;

/**
 * Tasks one message may reference: each is an ownership lookup in the store, so the list is
 * bounded like any other per-request work (A2A messages reference a handful at most).
 */
export const MAX_REFERENCE_TASK_IDS = 64;

const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

export const partKind = (p: A2aPart): string | undefined => p.kind ?? p.type;

/** The call, or the JSON-RPC error the protocol answers it with. */
export function readSendCall(body: unknown): SendCall {
  if (!isRecord(body))
    throw new RpcError(RpcCodes.invalidRequest, 'the body must be a JSON-RPC 2.0 request object', null);
  const rawId = body.id;
  const id: JsonRpcId =
    typeof rawId === 'string' || typeof rawId === 'number' || rawId === null ? rawId : null;
  if (body.jsonrpc !== '2.0') throw new RpcError(RpcCodes.invalidRequest, 'jsonrpc must be "2.0"', id);
  if (rawId === undefined || id !== rawId)
    throw new RpcError(RpcCodes.invalidRequest, 'id must be a string, a number or null', id);
  if (body.method !== 'message/send')
    throw new RpcError(
      RpcCodes.methodNotFound,
      `this route serves the method message/send only${typeof body.method === 'string' ? `, not ${body.method.slice(0, 64)}` : ''}`,
      id,
    );
  const params = body.params;
  if (!isRecord(params) || !isRecord(params.message))
    throw new RpcError(RpcCodes.invalidParams, 'params.message is required', id);
  const m = params.message;
  if (m.role !== 'user' && m.role !== 'agent')
    throw new RpcError(RpcCodes.invalidParams, 'params.message.role must be user or agent', id);
  if (typeof m.messageId !== 'string' || m.messageId === '')
    throw new RpcError(RpcCodes.invalidParams, 'params.message.messageId is required', id);
  if (!Array.isArray(m.parts) || m.parts.length === 0)
    throw new RpcError(RpcCodes.invalidParams, 'params.message.parts must be a non-empty array', id);
  if (m.parts.length > MAX_PARTS)
    throw new RpcError(RpcCodes.invalidParams, `params.message.parts: at most ${MAX_PARTS} parts`, id);
  for (const [i, p] of m.parts.entries()) {
    if (!isRecord(p))
      throw new RpcError(RpcCodes.invalidParams, `params.message.parts[${i}] must be an object`, id);
    const kind = partKind(p as A2aPart);
    if (kind !== 'text' && kind !== 'file' && kind !== 'data')
      throw new RpcError(
        RpcCodes.invalidParams,
        `params.message.parts[${i}].kind must be text, file or data`,
        id,
      );
    if (kind === 'text' && typeof p.text !== 'string')
      throw new RpcError(RpcCodes.invalidParams, `params.message.parts[${i}].text must be a string`, id);
  }
  for (const f of ['taskId', 'contextId'] as const)
    if (m[f] !== undefined && typeof m[f] !== 'string')
      throw new RpcError(RpcCodes.invalidParams, `params.message.${f} must be a string`, id);
  const refs: unknown = m.referenceTaskIds;
  if (refs !== undefined) {
    if (!Array.isArray(refs))
      throw new RpcError(
        RpcCodes.invalidParams,
        'params.message.referenceTaskIds must be an array of strings',
        id,
      );
    // Length first: a huge list is refused without walking it.
    if (refs.length > MAX_REFERENCE_TASK_IDS)
      throw new RpcError(
        RpcCodes.invalidParams,
        `params.message.referenceTaskIds: at most ${MAX_REFERENCE_TASK_IDS} task ids (got ${refs.length})`,
        id,
      );
    if (!refs.every((t) => typeof t === 'string'))
      throw new RpcError(
        RpcCodes.invalidParams,
        'params.message.referenceTaskIds must be an array of strings',
        id,
      );
  }
  return body as unknown as SendCall;
}

/** The task and context ids an agent's answer names (a Task, or a Message tied to one). */
export function idsOfResult(result: unknown): { taskId?: string; contextId?: string } {
  if (!isRecord(result)) return {};
  const kind = result.kind ?? result.type;
  const taskId = kind === 'task' ? result.id : result.taskId;
  return {
    ...(typeof taskId === 'string' && taskId !== '' && { taskId }),
    ...(typeof result.contextId === 'string' && result.contextId !== '' && { contextId: result.contextId }),
  };
}
