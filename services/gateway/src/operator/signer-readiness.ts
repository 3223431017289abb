/**
 * The gateway's readiness check of its signer: whether it answers and accepts the gateway's
 * internal token (what sign requests need: a signer with another INTERNAL_TOKEN is healthy but
 * refuses every one). Not the signer's /healthz: like every operator endpoint it answers only
 * a Host that is an address or an allowed name, and the gateway reaches the signer by its
 * service name.
 */
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { INTERNAL_TOKEN_HEADER, SIGNER_ACCESS_PATH } from '@pmm/protocol';

/** GET `${base}${path}` with a 1 s timeout; resolves on `expected`. */
function probe(base: string, path: string, expected: number, headers: Record<string, string> = {}): Promise<void> {
  const url = new URL(path, base);
  const request = url.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    const req = request(url, { method: 'GET', timeout: 1_000, headers }, (res) => {
      res.resume();
      if (res.statusCode === expected) resolve();
      else reject(new Error(`${path}: status ${res.statusCode}`));
    });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', (err) => reject(new Error((err as NodeJS.ErrnoException).code ?? 'unreachable')));
    req.end();
  });
}

export function signerReadiness(signerUrl: string, internalToken: string): () => Promise<void> {
  return async () => {
    await probe(signerUrl, SIGNER_ACCESS_PATH, 204, { [INTERNAL_TOKEN_HEADER]: internalToken }).catch((err: Error) => {
      throw err.message.endsWith('status 401') ? new Error('the signer refused the internal token (HTTP 401)') : err;
    });
  };
}
