/**
 * The API key a request was authenticated with, kept on the request's frame (core RequestLocals)
 * by the key step (api-key-step.ts) for the steps after it.
 */
import type { ServerResponse } from 'node:http';
import { localsOf, type RequestLocals } from '@pmm/core';
import type { ResolvedApiKey } from './api-key-store';

type AuthenticatedLocals = RequestLocals & { auth?: ResolvedApiKey };

export function setAuth(res: ServerResponse, auth: ResolvedApiKey): void {
  const locals = localsOf(res) as AuthenticatedLocals;
  locals.auth = auth;
  locals.caller = auth.integrator.id;
}

export function authOf(res: ServerResponse): ResolvedApiKey {
  const auth = (localsOf(res) as AuthenticatedLocals).auth;
  if (!auth) throw new Error('authOf called before the API key step');
  return auth;
}
