/**
 * Integrators and their API keys, as stored in Redis. An API key is stored only as its
 * SHA-256; the key record points to the integrator, so that an integrator can hold several
 * keys at once (rotation) while its whitelist and limits live in one place.
 */

export interface ApiKeyRecord {
  integratorId: string;
  /** Short public identifier of the key (its first characters), for listings and logs. */
  keyId: string;
  createdAt: number;
  disabled: boolean;
}

export interface IntegratorRecord {
  id: string;
  name: string;
  /** Lowercase addresses allowed as `userAddress` on the sign endpoint. */
  whitelist: string[];
  /** Chains this integrator may use; empty means every served chain. */
  chains: number[];
  /** Requests per window; 0 means the gateway's default. */
  rateLimit: { requests: number; windowSeconds: number };
  disabled: boolean;
  /** Optional per-chain originRate override (uint256 decimal string), keyed by chain id. */
  originRate?: Record<string, string>;
}
