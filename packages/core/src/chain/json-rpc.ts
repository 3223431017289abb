/**
 * The JSON-RPC vocabulary shared by the WebSocket and HTTP transports (the indexer's reads of
 * every block, the signer's firm quotes). The services speak JSON-RPC themselves instead of
 * through ethers' providers: they need per-request timeouts, a
 * batch pinned to one block, the `newHeads` header (with its timestamp) without a second
 * round trip, and full control of the socket's life: see docs/decisions/0058-ethers-websocketprovider.md and
 * docs/decisions/0059-viem-websocket-transport.md.
 */

export interface RpcRequest {
  method: string;
  params: readonly unknown[];
}

/** One answer of a batch: a result or the node's error for that entry. */
export type RpcOutcome = { ok: true; result: unknown } | { ok: false; error: RpcError };

/** A JSON-RPC connection to one node. */
export interface RpcTransport {
  readonly kind: 'ws' | 'http';
  /** One call; rejects with RpcError (the node said no), RpcTimeoutError or RpcConnectionError. */
  request(method: string, params: readonly unknown[], timeoutMs: number): Promise<unknown>;
  /** A JSON-RPC batch: one message, answers in request order. Rejects only as a whole. */
  batch(requests: readonly RpcRequest[], timeoutMs: number): Promise<RpcOutcome[]>;
  /** Closes the connection; pending requests reject with RpcConnectionError. Idempotent. */
  close(): void;
}

/** The node answered with a JSON-RPC error (a revert, an unknown block, …). */
export class RpcError extends Error {
  constructor(
    message: string,
    readonly code: number,
    readonly data?: unknown,
  ) {
    super(message);
    this.name = 'RpcError';
  }
}

/** No answer within the request's timeout. */
export class RpcTimeoutError extends Error {
  constructor(method: string, timeoutMs: number) {
    super(`${method}: no answer within ${timeoutMs} ms`);
    this.name = 'RpcTimeoutError';
  }
}

/** The connection failed or closed before the answer came. */
export class RpcConnectionError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RpcConnectionError';
  }
}

interface RawError {
  code?: unknown;
  message?: unknown;
  data?: unknown;
}

/** An RpcError from the `error` member of a JSON-RPC response. */
export function toRpcError(raw: unknown): RpcError {
  const e: RawError = isRpcObject(raw) ? raw : {};
  return new RpcError(
    typeof e.message === 'string' ? e.message.slice(0, 500) : 'JSON-RPC error',
    typeof e.code === 'number' ? e.code : -32603,
    e.data,
  );
}

/** Why a message from the node was thrown away (the label of `indexer_node_messages_dropped_total`). */
export type DroppedReason = 'oversized' | 'malformed' | 'unexpected' | 'redirect';

/**
 * What a transport accepts from a node: the node is not trusted to be small or well formed
 * (docs/decisions/0034-a-node-that-lags-lies-or-floods.md).
 */
export interface TransportLimits {
  /** Largest answer or WebSocket message, bytes; a bigger one is refused before it is parsed. */
  maxAnswerBytes: number;
  /** Called for every message dropped (metrics). */
  onDropped(reason: DroppedReason): void;
}

/** True for a JSON object (not null, not an array): the only shape a JSON-RPC answer or notification has. */
export function isRpcObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Longest hex quantity we read: a uint256 (`0x` + 64 digits). */
const MAX_QUANTITY_LENGTH = 66;

/** `0x`-hex quantity → number (block numbers, timestamps, chain ids). */
export function hexToNumber(value: unknown, what: string): number {
  if (typeof value !== 'string' || value.length > MAX_QUANTITY_LENGTH || !/^0x[0-9a-fA-F]+$/.test(value))
    throw new RpcError(`${what}: not a hex quantity`, -32603);
  const n = Number.parseInt(value, 16);
  if (!Number.isSafeInteger(n)) throw new RpcError(`${what}: out of range`, -32603);
  return n;
}

/** number → `0x`-hex quantity, as block tags are written. */
export function numberToHex(n: number): string {
  return '0x' + n.toString(16);
}

/**
 * The block parameter of `eth_call` per EIP-1898: the block's hash, not its number, so that
 * every call of a block reads THAT block's state even if a reorg replaces the block at its
 * height meanwhile (the node then answers an error instead of another block's state).
 */
export interface BlockHashRef {
  blockHash: string;
  requireCanonical: true;
}

export function blockHashRef(hash: string): BlockHashRef {
  return { blockHash: hash, requireCanonical: true };
}

/** True for a block hash: `0x` and 32 bytes of hex. */
export function isBlockHash(value: unknown): value is string {
  return typeof value === 'string' && value.length === 66 && /^0x[0-9a-fA-F]{64}$/.test(value);
}

/**
 * `0x` and whole bytes of hex. One character class, never a repeated group: a group repeated
 * per byte costs the regular-expression engine stack in proportion to the input and overflows
 * it on a few MiB (a node decides how long its answers are).
 */
export function isHexBytes(value: unknown): value is string {
  return typeof value === 'string' && value.length % 2 === 0 && /^0x[0-9a-fA-F]*$/.test(value);
}

/**
 * The revert data of a failed `eth_call`, as the node puts it in the JSON-RPC error: geth and
 * most nodes as `error.data` (hex), Hardhat as `error.data.data`. `0x` when there is none, so
 * that a revert with a reason is not mistaken for a call that failed without one (out of gas).
 */
export function revertData(err: RpcError): string {
  const data = err.data;
  const hex = typeof data === 'object' && data !== null ? (data as { data?: unknown }).data : data;
  return isHexBytes(hex) ? hex : '0x';
}
