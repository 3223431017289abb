/**
 * The whole header set of a request to the signer (sign-forward.ts): which request it is, for
 * which integrator, under which API key, the internal token that proves the gateway sent it,
 * what is left of the sign's deadline, and the body's type, encoding and exact length. Built here from what the gateway decided;
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
  SIGN_BUDGET_HEADER,
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
  /** What is left of the sign's deadline, whole ms (sign-admission.ts): the signer works to it. */
  budgetMs: number;
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
    [SIGN_BUDGET_HEADER]: String(h.budgetMs),
  };
  if (h.encoding !== undefined) headers['content-encoding'] = h.encoding;
  return headers;
}

/**
 * The name of every header a request to the signer carries, sorted: this module's (a body
 * without encoding) and the two Node's client adds (`host`, `connection`). What tests hold the
 * wire to.
 */
export const SIGNER_REQUEST_HEADER_NAMES: readonly string[] = [
  ...Object.keys(
    signerRequestHeaders(
      { requestId: '', serviceRequestId: '', integratorId: '', apiKeyId: '', encoding: undefined, budgetMs: 0 },
      '',
      0,
    ),
  ),
  'host',
  'connection',
].sort();
