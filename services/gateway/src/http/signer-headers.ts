/**
 * What the gateway tells the signer about a sign request (sign-proxy.ts): which request it is,
 * for which integrator, under which API key, and the internal token that proves the gateway
 * sent it. The key itself never leaves the gateway; the client's own values of these headers
 * are replaced.
 */
import {
  API_KEY_ID_HEADER,
  INTEGRATOR_ID_HEADER,
  INTERNAL_TOKEN_HEADER,
  REQUEST_ID_HEADER,
  SERVICE_REQUEST_ID_HEADER,
} from '@pmm/protocol';

export interface SignerHeaders {
  /** The id the client sees (its own when it sent one), and the gateway's own. */
  requestId: string;
  serviceRequestId: string;
  integratorId: string;
  /** The API key's public id (never the key): the signer writes it into the audit trail. */
  apiKeyId: string;
}

/** The headers set on each request to the signer, its body's length included. */
export function signerRequestHeaders(
  h: SignerHeaders,
  internalToken: string,
  bodyLength: number,
): [string, string | number][] {
  return [
    [INTERNAL_TOKEN_HEADER, internalToken],
    [REQUEST_ID_HEADER, h.requestId],
    [SERVICE_REQUEST_ID_HEADER, h.serviceRequestId],
    [INTEGRATOR_ID_HEADER, h.integratorId],
    [API_KEY_ID_HEADER, h.apiKeyId],
    ['Content-Length', bodyLength],
  ];
}
