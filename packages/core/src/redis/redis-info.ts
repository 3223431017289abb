/**
 * One field of a Redis `INFO` answer (`name:value` lines): how the services read the server's
 * state, since INFO, unlike CONFIG GET, shows no password (docs/decisions/0053-no-redis-user-reads-the-servers-configuration.md).
 */
export function infoField(info: string, name: string): string | undefined {
  return new RegExp(`^${name}:(.*)$`, 'm').exec(info)?.[1]?.trim();
}
