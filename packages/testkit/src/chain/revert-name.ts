/**
 * The custom error a contract call reverted with, by name, decoded with the contract's ABI.
 *
 * A simulated or read call (simulateContract, readContract, a raw `call`) rejects with the revert
 * data. A sent transaction is different on the devnet's anvil nodes: like production nodes they
 * accept a transaction that will revert, mine it and return its hash; the receipt says only
 * `reverted`. The revert data is then read from the node's callTracer (the transaction's `output`),
 * which is why a client is needed for sent transactions.
 */
import {
  BaseError,
  ContractFunctionRevertedError,
  decodeErrorResult,
  type Abi,
  type Hex,
  type PublicClient,
} from 'viem';

const TX_HASH = /^0x[0-9a-fA-F]{64}$/;

function nameFromError(err: unknown, abi: Abi): string {
  if (!(err instanceof BaseError)) throw err;
  const reverted = err.walk((e) => e instanceof ContractFunctionRevertedError);
  if (reverted instanceof ContractFunctionRevertedError && reverted.data?.errorName) return reverted.data.errorName;
  const withData = err.walk((e) => typeof (e as { data?: unknown }).data === 'string');
  const data = (withData as { data?: unknown } | null)?.data;
  const fromMessage = /return data: (0x[0-9a-fA-F]+)/.exec(err.message)?.[1];
  const raw = typeof data === 'string' && data.startsWith('0x') ? data : fromMessage;
  if (raw && raw.length >= 10) return decodeErrorResult({ abi, data: raw as Hex }).errorName;
  throw err;
}

/**
 * The error name `call` reverted with. `call` may resolve to a transaction hash (a sent
 * transaction): give `client` and the mined transaction's revert is read from the node's tracer.
 * Fails when the call or transaction did not revert.
 */
export async function revertName(call: Promise<unknown>, abi: Abi, client?: PublicClient): Promise<string> {
  let result: unknown;
  try {
    result = await call;
  } catch (err) {
    return nameFromError(err, abi);
  }
  if (client && typeof result === 'string' && TX_HASH.test(result)) {
    const hash = result as Hex;
    const receipt = await client.waitForTransactionReceipt({ hash, pollingInterval: 50 });
    if (receipt.status === 'reverted') {
      const trace = (await client.request({
        method: 'debug_traceTransaction' as never,
        params: [hash, { tracer: 'callTracer', tracerConfig: { onlyTopCall: true } }] as never,
      })) as { output?: Hex };
      if (trace.output && trace.output.length >= 10) return decodeErrorResult({ abi, data: trace.output }).errorName;
      throw new Error(`transaction ${hash} reverted without revert data`);
    }
  }
  throw new Error('expected a revert, but the call succeeded');
}
