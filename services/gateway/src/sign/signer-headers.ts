/**
 * The whole header set of a request to the signer (sign-forward.ts): which request it is, for
 * which integrator, under which API key, the internal token that proves the gateway sent it,
 * and the body's type, encoding and exact length. Built here from what the gateway decided;
 * nothing else is sent (no client header, whatever its name or case). The key itself never
 * leaves the gateway.
 */
import type { OutgoingHttpHeaders } from 'node:http';
import {
  API_KEY_ID_HEADER,
  INTEGRATOR_ID_HEADER,
  INTERNAL_TOKEN_HEADER,
  REQUEST_ID_HEADER,
  SERVICE_REQUEST_ID_HEADER,
} from '@pmm/protocol';

export interface SignerHeaders {
  /** The id the client sees (its own when it sent a valid one), and the gateway's own. */
  requestId: string;
  serviceRequestId: string;
  integratorId: string;
  /** The API key's public id (never the key): the signer writes it into the audit trail. */
  apiKeyId: string;
  /** The body's `Content-Encoding`, already checked (protocol bodyEncoding); undefined for none. */
  encoding: string | undefined;
}

export function signerRequestHeaders(h: SignerHeaders, internalToken: string, bodyLength: number): OutgoingHttpHeaders {
  const headers: OutgoingHttpHeaders = {
    'content-type': 'application/json',
    'content-length': bodyLength,
    [INTERNAL_TOKEN_HEADER]: internalToken,
    [REQUEST_ID_HEADER]: h.requestId,
    [SERVICE_REQUEST_ID_HEADER]: h.serviceRequestId,
    [INTEGRATOR_ID_HEADER]: h.integratorId,
    [API_KEY_ID_HEADER]: h.apiKeyId,
  };
  if (h.encoding !== undefined) headers['content-encoding'] = h.encoding;
  return headers;
}
