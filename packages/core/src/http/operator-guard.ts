/**
 * What every operator endpoint checks before anything else: the gateway's operator port (mounted
 * on `/` of its route table), and the health and metrics routes of the signer and the indexers:
 * - the Host header names this port: an IP address, `localhost`, or one of OPS_ALLOWED_HOSTS.
 *   A page in an operator's browser can reach 127.0.0.1:9080 under a host name of its own
 *   (DNS rebinding); its requests then carry that name, and are refused, so the page can read
 *   neither the metrics nor the console;
 * - with OPS_TOKEN set, `Authorization: Bearer <token>` on everything but `/healthz` and
 *   `/readyz` (the probes of load balancers and orchestrators stay open).
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { isIP } from 'node:net';
import { ApiError } from '@pmm/protocol';
import { pathOf, type Step } from './route-table';

const OPEN_PATHS = new Set(['/healthz', '/readyz']);
const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest();

/** The host name of a Host header value (`[::1]:9080` → `::1`, `gateway:9080` → `gateway`), lower case. */
export function hostName(host: string): string {
  const name = host.startsWith('[') ? host.slice(1, host.indexOf(']')) : host.replace(/:[0-9]*$/, '');
  return name.toLowerCase();
}

export interface OperatorGuardOptions {
  allowedHosts: readonly string[];
  token?: string;
}

export function operatorGuard(opts: OperatorGuardOptions): Step {
  const allowed = new Set(['localhost', ...opts.allowedHosts.map((h) => h.toLowerCase())]);
  const expected = opts.token === undefined ? undefined : sha256(`Bearer ${opts.token}`);
  return (req, _res, next) => {
    const name = hostName(req.headers.host ?? '');
    if (isIP(name) === 0 && !allowed.has(name)) {
      return next(new ApiError('MALFORMED_REQUEST', 'Host: not a host name of the operator port (OPS_ALLOWED_HOSTS)'));
    }
    if (expected && !OPEN_PATHS.has(pathOf(req))) {
      const given = req.headers.authorization;
      if (typeof given !== 'string' || !timingSafeEqual(sha256(given), expected)) {
        return next(
          new ApiError('UNAUTHORIZED', 'Authorization: the operator token (OPS_TOKEN) is required', {
            'WWW-Authenticate': 'Bearer',
          }),
        );
      }
    }
    next();
  };
}
