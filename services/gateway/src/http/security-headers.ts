/**
 * Security headers from helmet, configured for a JSON API (the public port serves no HTML): a CSP
 * that forbids everything, no framing, no referrer, HSTS, nosniff, same-origin COOP/CORP.
 * Headers meant for HTML pages in old browsers (X-XSS-Protection, X-Download-Options,
 * X-DNS-Prefetch-Control, X-Permitted-Cross-Domain-Policies, Origin-Agent-Cluster) are left
 * out: they do nothing for an API and cost bytes on every response.
 *
 * helmet's output does not depend on the request, so it is computed once at start-up and
 * written as a fixed list (the hot path pays a few setHeader calls, not helmet's chain).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import helmet from 'helmet';

export type HeaderList = ReadonlyArray<readonly [string, string]>;

/** The API's policy: nothing may load. */
const API_CSP: Record<string, string[]> = { defaultSrc: ["'none'"], frameAncestors: ["'none'"] };

/** The headers; `csp` replaces the API's Content-Security-Policy (the operator console's page needs its own). */
export function securityHeaders(csp: Record<string, string[]> = API_CSP): HeaderList {
  const middleware = helmet({
    contentSecurityPolicy: { useDefaults: false, directives: csp },
    crossOriginOpenerPolicy: { policy: 'same-origin' },
    crossOriginResourcePolicy: { policy: 'same-origin' },
    referrerPolicy: { policy: 'no-referrer' },
    xFrameOptions: { action: 'deny' },
    xXssProtection: false,
    xDownloadOptions: false,
    xDnsPrefetchControl: false,
    xPermittedCrossDomainPolicies: false,
    originAgentCluster: false,
  });
  const headers: [string, string][] = [];
  const recorder = {
    setHeader(name: string, value: string | number) {
      headers.push([name, String(value)]);
    },
    removeHeader() {},
  };
  let done = false;
  middleware({} as IncomingMessage, recorder as unknown as ServerResponse, () => {
    done = true;
  });
  if (!done) throw new Error('helmet did not complete synchronously');
  return headers;
}
