/**
 * The SDK's wire constants are the protocol's own definitions (no copies), and its EIP-712
 * helpers produce the typed data the services hash.
 */
import { AMM_VERIFICATION_TYPES, API_ERROR_CODES, ammVerificationDomain, type Orderbook } from '@pmm/client';
import { ERROR_CODES, ammVerificationTypedData, type OrderbookResponse } from '@pmm/protocol';

// Compile-time (tsc -p tsconfig.test.json, part of npm test): the SDK's orderbook type and
// the server's are assignable both ways, so a field added or renamed on one side fails.
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const _orderbookShapesAgree: Same<Orderbook, OrderbookResponse> = true;

describe('SDK constants match the server', () => {
  it('behavior: the error codes are exactly the server codes', () => {
    expect(API_ERROR_CODES).toBe(ERROR_CODES);
  });

  it('behavior: the EIP-712 domain and types are the ones core signs with', () => {
    const verifier = '0x5FbDB2315678afecb367f032d93F642f64180aa3';
    const core = ammVerificationTypedData({
      chainId: 56,
      verifier,
      tokenIn: '0x' + '1'.repeat(40),
      tokenOut: '0x' + '2'.repeat(40),
      timestampInMilisec: 1n,
    });
    expect(ammVerificationDomain(56, verifier)).toEqual(core.domain);
    expect(AMM_VERIFICATION_TYPES).toEqual(core.types);
  });
});
