/**
 * The calls of the router's `swap` inside one transaction, at any depth, read from the node's
 * tracer. Three tracers exist in the wild; each gives the call tree in its own shape:
 *
 * - `callTracer`: `debug_traceTransaction(hash, {tracer: 'callTracer'})`, a tree of frames
 *   {type, from, to, input, output, error, calls}. geth and its forks (op-geth on Base, bsc-geth
 *   on BNB Chain), reth, erigon, nethermind, anvil.
 * - `parity`: `trace_transaction(hash)`, a flat list in execution order with each trace's
 *   `traceAddress` (its path in the tree). erigon, reth, nethermind, besu.
 * - `structLogs`: `debug_traceTransaction(hash, {})`, the default opcode logger: every step with
 *   its stack and memory, from which the calls are rebuilt. The only one Hardhat 2 offers ("Hardhat
 *   currently only supports the default tracer"); geth has it too; anvil gives the steps only when
 *   started with --steps-tracing (an empty list otherwise). Megabytes per transaction and slow on
 *   Hardhat (hundreds of ms): the last resort.
 *
 * `auto` tries them in that order on the first transaction that needs one and keeps the first
 * the node accepts. A call that reverted, or whose caller (at any level) reverted, changed nothing:
 * it is returned with `reverted` (and, when it failed itself, its `error` and revert data) so that
 * `audit tx` can show it and the ledger records it (swaps/scan-reverts.ts), and is never a swap.
 *
 * The node's answer is not trusted: trees are walked without recursion and refused past the EVM's
 * call-depth limit (no real transaction goes deeper), and lengths read from a struct log's stack
 * are clamped to the memory the step actually carries (the answer's size is bounded by the reader).
 * A refused answer makes the transaction fail to trace: it is listed apart with the reason.
 */
import { SWAP_SELECTOR } from '@pmm/protocol';
import { rpcError, type ChainReader } from './chain-reader';

export type TracerKind = 'callTracer' | 'parity' | 'structLogs';
export const TRACER_KINDS: readonly TracerKind[] = ['callTracer', 'parity', 'structLogs'];

/** Why a transaction is listed apart when the node has none of the tracers. */
export const NO_TRACER_REASON =
  'needs a node with debug_traceTransaction (callTracer or the default struct logger) or trace_transaction';

/** One call of the router's `swap(...)` (by selector) with CALL semantics, in execution order. */
export interface RouterSwapCall {
  /** Lowercase: msg.sender of the call (the router requires it to be the signed userAddress). */
  from: string;
  /** Lowercase hex calldata. */
  input: string;
  /** Lowercase hex return data, or revert data when the call itself failed ('0x' when none). */
  output: string;
  /** Depth below the transaction's own call (0: the transaction calls the router itself). */
  depth: number;
  /** The call changed nothing: it failed, or a caller above it did. */
  reverted: boolean;
  /** The tracer's error when the call itself failed (`output` then holds its revert data, when the tracer gives it). */
  error?: string;
}

/** The node refused the tracer itself (not this transaction): try another. */
export class TracerUnsupported extends Error {}

/** The EVM's call-depth limit: a call at depth 1024 cannot call further. */
export const MAX_CALL_DEPTH = 1024;

/** A trace no EVM can produce: the transaction is listed apart with this reason. */
export class ImpossibleTrace extends Error {}

const tooDeep = () => new ImpossibleTrace(`the trace nests calls deeper than the EVM's limit (${MAX_CALL_DEPTH})`);

const lower = (s: unknown) => (typeof s === 'string' ? s.toLowerCase() : '');
const isSwapInput = (input: string) => input.startsWith(SWAP_SELECTOR);

interface CallFrame {
  type?: string;
  from?: string;
  to?: string;
  input?: string;
  output?: string;
  error?: string;
  calls?: CallFrame[];
}

/**
 * callTracer's tree: pre-order is execution order; an error anywhere above reverts the call.
 * Walked with an explicit stack (children pushed in reverse keep the pre-order).
 */
export function swapCallsFromCallTracer(root: CallFrame, router: string): RouterSwapCall[] {
  const out: RouterSwapCall[] = [];
  const stack: { frame: unknown; depth: number; revertedAbove: boolean }[] = [
    { frame: root, depth: 0, revertedAbove: false },
  ];
  while (stack.length > 0) {
    const { frame, depth, revertedAbove } = stack.pop()!;
    if (depth > MAX_CALL_DEPTH) throw tooDeep();
    if (typeof frame !== 'object' || frame === null) throw new ImpossibleTrace('a callTracer frame is not an object');
    const f = frame as CallFrame;
    const reverted = revertedAbove || f.error !== undefined;
    const input = lower(f.input);
    if (lower(f.type) === 'call' && lower(f.to) === router && isSwapInput(input))
      out.push({
        from: lower(f.from),
        input,
        output: lower(f.output) || '0x',
        depth,
        reverted,
        ...(f.error !== undefined ? { error: String(f.error) } : {}),
      });
    const calls: unknown = f.calls;
    if (Array.isArray(calls))
      for (let i = calls.length - 1; i >= 0; i--)
        stack.push({ frame: calls[i], depth: depth + 1, revertedAbove: reverted });
  }
  return out;
}

interface ParityTrace {
  type?: string;
  action?: { callType?: string; from?: string; to?: string; input?: string };
  result?: { output?: string } | null;
  error?: string;
  traceAddress?: number[];
}

/** A position in trace_transaction's tree: whether the trace there, or one above it, failed. */
interface TraceNode {
  failed: boolean;
  children: Map<unknown, TraceNode>;
}

/**
 * trace_transaction's flat list: execution order; a trace reverted when it or an ancestor has an
 * error. Ancestors are found by walking a tree of the traceAddresses seen (linear in the depth).
 */
export function swapCallsFromParity(traces: ParityTrace[], router: string): RouterSwapCall[] {
  const root: TraceNode = { failed: false, children: new Map() };
  const out: RouterSwapCall[] = [];
  for (const t of traces) {
    if (typeof t !== 'object' || t === null) throw new ImpossibleTrace('a trace_transaction entry is not an object');
    const path: unknown = t.traceAddress ?? [];
    if (!Array.isArray(path)) throw new ImpossibleTrace('a traceAddress is not a list');
    if (path.length > MAX_CALL_DEPTH) throw tooDeep();
    let node = root;
    let reverted = false;
    for (const index of path) {
      reverted ||= node.failed;
      let next = node.children.get(index);
      if (!next) node.children.set(index, (next = { failed: false, children: new Map() }));
      node = next;
    }
    reverted ||= node.failed || t.error !== undefined;
    node.failed = reverted;
    const a = t.action ?? {};
    const input = lower(a.input);
    if (t.type === 'call' && lower(a.callType) === 'call' && lower(a.to) === router && isSwapInput(input))
      out.push({
        from: lower(a.from),
        input,
        output: lower(t.result?.output) || '0x',
        depth: path.length,
        reverted,
        ...(t.error !== undefined ? { error: String(t.error) } : {}),
      });
  }
  return out;
}

interface StructLog {
  op: string;
  depth: number;
  stack?: string[];
  memory?: string[];
}

const word = (hex: string | undefined) => BigInt(hex === undefined ? 0 : hex.startsWith('0x') ? hex : `0x${hex}`);

/** The stack's n-th value from the top (0 = top). */
const fromTop = (step: StructLog, n: number) => word(step.stack?.[(step.stack?.length ?? 0) - 1 - n]);

/**
 * `length` bytes of the step's memory from `offset`, clamped to the memory the step carries: a
 * caller writes a call's input into memory before the call, so nothing real lies beyond it, while
 * a hostile length (a stack word near 2^256) would otherwise allocate without limit.
 */
function memorySlice(step: StructLog, offset: bigint, length: bigint): string {
  if (length === 0n) return '0x';
  const memory: unknown = step.memory;
  const words = Array.isArray(memory) ? memory.filter((w): w is string => typeof w === 'string') : [];
  const hex = words.map((w) => (w.startsWith('0x') ? w.slice(2) : w)).join('');
  const held = BigInt(hex.length / 2);
  if (offset >= held) return '0x';
  const end = offset + length < held ? offset + length : held;
  return `0x${hex.slice(Number(offset) * 2, Number(end) * 2)}`.toLowerCase();
}

interface OpenFrame {
  depth: number;
  /** The address whose storage and identity the code runs with (msg.sender of its CALLs). */
  context: string;
  /** The router swap call this frame is, if it is one. */
  swap?: RouterSwapCall;
  /** Swap calls made in this frame or below, still to be confirmed by this frame's success. */
  inside: RouterSwapCall[];
}

/**
 * Rebuilds the router's swap calls from the default struct logger's steps (stack and memory on):
 * a CALL's target and input come from its stack and memory; the next step at the caller's depth
 * has the call's success flag on top of the stack; the router's RETURN has its output.
 */
export function swapCallsFromStructLogs(
  result: { failed?: boolean; structLogs?: StructLog[] },
  tx: { from: string; to: string },
  router: string,
): RouterSwapCall[] {
  const out: RouterSwapCall[] = [];
  const frames: OpenFrame[] = [{ depth: 1, context: tx.to, inside: [] }];
  let pending: { context: string; swap?: RouterSwapCall } | undefined;
  const close = (success: boolean) => {
    const frame = frames.pop()!;
    const parent = frames[frames.length - 1]!;
    if (success) parent.inside.push(...frame.inside);
    else for (const s of frame.inside) s.reverted = true;
    if (!success && frame.swap) frame.swap.error = 'execution reverted';
  };
  const logs = result.structLogs ?? [];
  for (const step of logs) {
    if (typeof step !== 'object' || step === null || typeof step.depth !== 'number')
      throw new ImpossibleTrace('a struct log step has no depth');
    // The transaction's own call is depth 1 here, so the deepest possible frame is one more.
    if (step.depth > MAX_CALL_DEPTH + 1) throw tooDeep();
    let top = frames[frames.length - 1]!;
    if (step.depth > top.depth && pending) {
      // The call of the previous step entered its callee.
      const frame: OpenFrame = { depth: step.depth, context: pending.context, inside: [] };
      if (pending.swap) {
        frame.swap = pending.swap;
        frame.inside.push(pending.swap);
        out.push(pending.swap);
      }
      frames.push(frame);
      top = frame;
    }
    while (step.depth < top.depth && frames.length > 1) {
      // Back in the caller: the CALL's result (1 success, 0 failure) is on top of its stack.
      close(step.depth === top.depth - 1 ? fromTop(step, 0) === 1n : false);
      top = frames[frames.length - 1]!;
    }
    pending = undefined;
    const op = step.op;
    if (op === 'CALL' || op === 'CALLCODE' || op === 'STATICCALL' || op === 'DELEGATECALL') {
      const to = `0x${fromTop(step, 1).toString(16).padStart(40, '0')}`;
      const hasValue = op === 'CALL' || op === 'CALLCODE';
      const argsOffset = fromTop(step, hasValue ? 3 : 2);
      const argsLength = fromTop(step, hasValue ? 4 : 3);
      const context = op === 'CALL' || op === 'STATICCALL' ? to : top.context;
      pending = { context };
      if (op === 'CALL' && to === router) {
        const input = memorySlice(step, argsOffset, argsLength);
        if (isSwapInput(input))
          // The struct logger counts the transaction's own call as depth 1: the callee is at step.depth + 1.
          pending.swap = { from: top.context, input, output: '0x', depth: step.depth, reverted: false };
      }
    } else if ((op === 'RETURN' || op === 'REVERT') && top.swap) {
      // RETURN: the amountOut; REVERT: the router's error, kept when the call fails.
      top.swap.output = memorySlice(step, fromTop(step, 0), fromTop(step, 1));
    }
  }
  // The transaction's own frame: every swap stands or falls with it.
  while (frames.length > 1) close(false);
  if (result.failed) for (const s of out) s.reverted = true;
  return out;
}

/** Whether the error says the node does not offer this tracer (as opposed to failing this transaction). */
function refusesTracer(err: unknown): boolean {
  const { code, message } = rpcError(err);
  return (
    code === -32601 ||
    /method.*(not found|not supported|does not exist|not available|unsupported)|not supported|unknown tracer|only supports the default tracer|tracer.*not (found|defined)/i.test(
      message,
    )
  );
}

/** The router's swap calls in a transaction with one tracer; TracerUnsupported when the node refuses it. */
export async function traceSwapCalls(
  reader: ChainReader,
  kind: TracerKind,
  tx: { hash: string; from: string; to: string | undefined },
  router: string,
): Promise<RouterSwapCall[]> {
  try {
    if (kind === 'callTracer') {
      const root = (await reader.send('debug_traceTransaction', [tx.hash, { tracer: 'callTracer' }])) as CallFrame;
      return swapCallsFromCallTracer(root, router);
    }
    if (kind === 'parity') {
      const traces = (await reader.send('trace_transaction', [tx.hash])) as ParityTrace[] | null;
      if (!Array.isArray(traces)) throw new TracerUnsupported('trace_transaction answered no list');
      return swapCallsFromParity(traces, router);
    }
    // Memory on (geth needs enableMemory; Hardhat has it by default), storage off (not needed, and the bulk).
    const result = (await reader.send('debug_traceTransaction', [
      tx.hash,
      { disableStorage: true, enableMemory: true, disableMemory: false, disableStack: false },
    ])) as { failed?: boolean; structLogs?: StructLog[] };
    if (!Array.isArray(result?.structLogs)) throw new TracerUnsupported('debug_traceTransaction gave no structLogs');
    // Every transaction traced here ran contract code, so it has steps. None means the node did not
    // record them (anvil without --steps-tracing): reading that as "no swap" would drop swaps silently.
    if (result.structLogs.length === 0) throw new TracerUnsupported('debug_traceTransaction recorded no steps');
    return swapCallsFromStructLogs(result, { from: tx.from, to: tx.to ?? '' }, router);
  } catch (err) {
    if (err instanceof TracerUnsupported || refusesTracer(err))
      throw new TracerUnsupported(`${kind}: ${rpcError(err).message}`);
    throw err;
  }
}

/**
 * Finds, once per chain, the first tracer the node accepts (`auto`), or holds the one the operator
 * named. `undefined` once every tracer was refused: such transactions are listed apart.
 */
export class TracerChoice {
  private chosen: Promise<TracerKind | undefined> | undefined;
  readonly refusals: string[] = [];

  constructor(private readonly setting: TracerKind | 'auto' | 'none') {
    if (setting === 'none') this.chosen = Promise.resolve(undefined);
  }

  /** The router's swap calls of the transaction, or undefined when no tracer is available. */
  async swapCalls(
    reader: ChainReader,
    tx: { hash: string; from: string; to: string | undefined },
    router: string,
  ): Promise<RouterSwapCall[] | undefined> {
    if (!this.chosen) {
      // The first transaction decides, alone: every later one waits for the choice.
      const kinds = this.setting === 'auto' ? TRACER_KINDS : [this.setting as TracerKind];
      let first: RouterSwapCall[] | undefined;
      const choosing = (async () => {
        for (const kind of kinds) {
          try {
            first = await traceSwapCalls(reader, kind, tx, router);
            return kind;
          } catch (err) {
            if (!(err instanceof TracerUnsupported)) throw err;
            this.refusals.push(err.message);
          }
        }
        return undefined;
      })();
      this.chosen = choosing;
      try {
        return (await choosing) ? first : undefined;
      } catch (err) {
        // This transaction failed, not the tracer (e.g. state pruned): the next one chooses again.
        if (this.chosen === choosing) this.chosen = undefined;
        throw err;
      }
    }
    const kind = await this.chosen;
    return kind ? traceSwapCalls(reader, kind, tx, router) : undefined;
  }

  /** The tracer in use, once chosen. */
  async kind(): Promise<TracerKind | undefined> {
    return this.chosen ? await this.chosen : undefined;
  }
}
