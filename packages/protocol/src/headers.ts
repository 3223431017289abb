/**
 * The HTTP header names the parts share, and the rule for ids carried in headers. Node lowercases
 * incoming header names, so the names are lowercase (HTTP header names are case-insensitive).
 */

/** The integrator's API key (public API). */
export const API_KEY_HEADER = 'x-api-key';
/** The request id: echoed on every response, forwarded by the gateway to the signer. */
export const REQUEST_ID_HEADER = 'x-request-id';

// Internal: set by the gateway on the proxied sign request, trusted by the signer only
// with a valid internal token.
export const INTERNAL_TOKEN_HEADER = 'x-internal-token';
export const INTEGRATOR_ID_HEADER = 'x-integrator-id';
/** The API key's public id (never the key), recorded in the audit trail. */
export const API_KEY_ID_HEADER = 'x-api-key-id';
/**
 * The auth scheme of the signer's `WWW-Authenticate` challenge on a 401 for a missing or wrong
 * internal token. It tells the gateway that the signer refused the GATEWAY (a deployment fault,
 * answered 503 to the client), not the integrator (a key revoked meanwhile, passed on as 401).
 */
export const INTERNAL_TOKEN_SCHEME = 'X-Internal-Token';
/** The signer's path that answers 204 when the internal token is accepted (the gateway's /readyz). */
export const SIGNER_ACCESS_PATH = '/internal/access';

const SAFE_TOKEN_CHARS = 'A-Za-z0-9._:-';
const SAFE_TOKEN = new RegExp(`^[${SAFE_TOKEN_CHARS}]+$`);
const REQUEST_ID_MAX_LENGTH = 128;
/** The request-id rule as a JSON-schema pattern (the OpenAPI document's `X-Request-Id`). */
export const REQUEST_ID_PATTERN = `^[${SAFE_TOKEN_CHARS}]{1,${REQUEST_ID_MAX_LENGTH}}$`;

/**
 * True for an id that may be echoed in a header, a log line and an error body as it is:
 * 1…maxLength characters of letters, digits and `._:-`.
 */
export function isSafeToken(value: unknown, maxLength: number): value is string {
  return typeof value === 'string' && value.length >= 1 && value.length <= maxLength && SAFE_TOKEN.test(value);
}

/** The request-id rule: a caller's `X-Request-Id` is kept when it passes, else replaced by a UUID. */
export function isRequestId(value: unknown): value is string {
  return isSafeToken(value, REQUEST_ID_MAX_LENGTH);
}

/** The headers of every legacy `/v1` response (docs/decisions.md#legacy-v1), pointing to the successor. */
export function v1DeprecationHeaders(successorPath: string): Record<'Deprecation' | 'Link', string> {
  return { Deprecation: 'true', Link: `<${successorPath}>; rel="successor-version"` };
}
