/**
 * An audit record of realistic size (every field set, full-length hex), for tests and benchmarks
 * of the audit trail. `n` makes the signature unique, as real ones are (each signature gets its
 * own index entry).
 */
import type { AuditRecord } from '@pmm/core';

export function sampleAuditRecord(n: number, overrides: Partial<AuditRecord> = {}): AuditRecord {
  const nowMs = Date.now();
  return {
    time: nowMs,
    chainId: 8453,
    integratorId: 'bench',
    keyId: 'pmm_benchkey',
    // UUID-shaped, as the gateway's request ids are (the record's size is measured).
    requestId: `00000000-0000-4000-8000-${(n >>> 0).toString(16).padStart(12, '0')}`,
    userAddress: `0x${'ab'.repeat(20)}`,
    tokenIn: '0x833589fcd6edb6e08f4c7c32d4f71b54bda02913',
    tokenOut: '0x4200000000000000000000000000000000000006',
    fee: '30',
    originRate: '0',
    amountIn: '1000000',
    minAmountOut: '0',
    timestamp: Math.floor(nowMs / 1000),
    digest: `0x${'ef'.repeat(32)}`,
    signature: `0x${(n >>> 0).toString(16).padStart(130, '0')}`,
    signer: `0x${'12'.repeat(20)}`,
    ...overrides,
  };
}
