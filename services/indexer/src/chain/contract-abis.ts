/**
 * The helper contract's ethers Interface for the registry reads (pair-registry-reader.ts, run
 * when the registry changes, not per block): built once from the compiled reference artifact,
 * which implements the documented interface. The tokens' own metadata calls are core's
 * (token-metadata.ts). Everything in the per-block call is encoded by call-codec.ts
 * (docs/decisions/0060-abi-codecs.md).
 */
import { Interface } from 'ethers';
import { PmmHelperArtifact } from '@pmm/contracts';

/** getListedTokens(), getQuoteToken(). */
export const helperInterface = new Interface(PmmHelperArtifact.abi);
