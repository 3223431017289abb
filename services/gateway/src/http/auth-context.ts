/**
 * What the API-key guard learned about a request, kept in `res.locals` for the handlers
 * after it (rate limit, chain check, proxy headers).
 */
import type { Response } from 'express';
import type { ResolvedApiKey } from '../store/api-key-store';

export function setAuth(res: Response, auth: ResolvedApiKey): void {
  res.locals.auth = auth;
}

/** The authenticated key; throws when called before the guard (a wiring bug). */
export function authOf(res: Response): ResolvedApiKey {
  const auth = res.locals.auth as ResolvedApiKey | undefined;
  if (!auth) throw new Error('authOf called before the API key guard');
  return auth;
}
