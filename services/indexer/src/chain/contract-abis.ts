/**
 * ethers Interfaces for the registry reads (pair-registry-reader.ts, run when the registry
 * changes, not per block): built once from the compiled reference artifacts, which implement
 * the documented interfaces. Everything in the per-block call is encoded by call-codec.ts
 * (docs/decisions.md#abi-codecs).
 */
import { Interface } from 'ethers';
import { PmmHelperArtifact } from '@pmm/contracts';

/** getListedTokens(), getQuoteToken(). */
export const helperInterface = new Interface(PmmHelperArtifact.abi);

/** The ERC-20 metadata the registry reads from every token. */
export const erc20Interface = new Interface([
  'function decimals() view returns (uint8)',
  'function symbol() view returns (string)',
]);

/** Some old tokens (MKR, SAI) return `symbol()` as bytes32. */
export const erc20Bytes32SymbolInterface = new Interface(['function symbol() view returns (bytes32)']);
