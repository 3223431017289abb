/**
 * The messages on the `access-updated` channel (redis-keys.ts): the key store publishes one
 * after each write of an API key or an integrator record; the caches in front of those
 * records (the gateway's key cache, the signer's integrator cache) drop the entry it names.
 * Pub/sub has no backlog, so a cache also drops everything when its subscriber reconnects.
 */

export type AccessUpdate = { kind: 'integrator'; id: string } | { kind: 'apikey'; hash: string };

export function encodeAccessUpdate(update: AccessUpdate): string {
  return update.kind === 'integrator' ? `integrator:${update.id}` : `apikey:${update.hash}`;
}

/** The update a message names; undefined for anything else (ignored by the caches). */
export function parseAccessUpdate(message: string): AccessUpdate | undefined {
  const colon = message.indexOf(':');
  const kind = message.slice(0, colon);
  const value = message.slice(colon + 1);
  if (colon <= 0 || value.length === 0) return undefined;
  if (kind === 'integrator') return { kind, id: value };
  if (kind === 'apikey') return { kind, hash: value };
  return undefined;
}
