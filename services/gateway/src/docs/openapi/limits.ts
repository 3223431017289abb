/**
 * The limits the OpenAPI document states: the settings' defaults (a deployment may change
 * them) and the timeouts the gateway derives from them, so the prose cannot drift from the code.
 */
import { maxHeaderSize } from 'node:http';
import { GATEWAY_SETTINGS, gatewayTimeouts } from '../../config';

/** A setting's default: the limits the document states are the defaults (a deployment may change them). */
function defaultOf<T>(setting: { env: string; default?: T }): T {
  if (setting.default === undefined) throw new Error(`${setting.env} has no default`);
  return setting.default;
}
export const TIMEOUT_MS = defaultOf(GATEWAY_SETTINGS.requestTimeoutMs);
export const TIMEOUTS = gatewayTimeouts({ requestTimeoutMs: TIMEOUT_MS });
export const BODY_LIMIT = defaultOf(GATEWAY_SETTINGS.signBodyLimit);
export const SIGN_DEADLINE_MS = defaultOf(GATEWAY_SETTINGS.signDeadlineMs);
export const RATE_LIMIT = defaultOf(GATEWAY_SETTINGS.defaultRateLimit);
export const RATE_WINDOW_SECONDS = defaultOf(GATEWAY_SETTINGS.defaultRateWindowSeconds);
export const STREAMS_PER_KEY = defaultOf(GATEWAY_SETTINGS.streamsPerKey);
export const HEARTBEAT_MS = defaultOf(GATEWAY_SETTINGS.streamHeartbeatMs);
export const seconds = (ms: number) => ms / 1000;
/** Node's limit of the request headers, in bytes (answered 431 beyond it). */
export const MAX_HEADER_BYTES = maxHeaderSize;
