/**
 * What the gateway tells the signer about a sign request, on both ways to it (the sign link,
 * sign-fast-path.ts, and http-proxy-middleware, sign-proxy.ts): which request it is, for which
 * integrator, under which API key. The key itself never leaves the gateway; the client's own
 * values of these headers are never passed on.
 */
import {
  API_KEY_HEADER,
  API_KEY_ID_HEADER,
  INTEGRATOR_ID_HEADER,
  INTERNAL_TOKEN_HEADER,
  REQUEST_ID_HEADER,
} from '@pmm/protocol';

export interface SignerHeaders {
  requestId: string;
  integratorId: string;
  /** The API key's public id (never the key): the signer writes it into the audit trail. */
  apiKeyId: string;
}

/** Client headers never forwarded over HTTP: the API key stays in the gateway; the body is re-framed. */
export const DROPPED_REQUEST_HEADERS = [API_KEY_HEADER, 'transfer-encoding'] as const;

/** The request's identity, as the signer reads it (lower-case names, as on the sign link). */
export function signerIdentityHeaders(h: SignerHeaders): Record<string, string> {
  return {
    [REQUEST_ID_HEADER]: h.requestId,
    [INTEGRATOR_ID_HEADER]: h.integratorId,
    [API_KEY_ID_HEADER]: h.apiKeyId,
  };
}

/** Over HTTP, each request also carries the internal token and its body's length. */
export function signerRequestHeaders(
  h: SignerHeaders,
  internalToken: string,
  bodyLength: number,
): [string, string | number][] {
  return [
    [INTERNAL_TOKEN_HEADER, internalToken],
    ...Object.entries(signerIdentityHeaders(h)),
    ['Content-Length', bodyLength],
  ];
}
