/**
 * Settings every service declares the same way, declared once: spread into each service's
 * settings object (`...SHARED_SETTINGS`), so their names, defaults and documentation agree.
 */
import { ConfigError, settings, type Setting } from './config';
import { parseChainDeployments, type ChainDeployments } from './chain-deployment';
import { DEFAULT_KEY_PREFIX } from './redis-keys';

export const LOG_LEVELS = ['error', 'warn', 'info', 'debug'] as const;

export const SHARED_SETTINGS = {
  redisUrl: settings.url(
    'REDIS_URL',
    'Redis: redis:// or rediss:// (single node), redis-sentinel://host:port,…/<master>, redis-cluster://host:port,….',
    'redis://127.0.0.1:6379',
    ['redis', 'rediss', 'redis-sentinel', 'redis-cluster'],
  ),
  redisKeyPrefix: settings.string(
    'REDIS_KEY_PREFIX',
    'Prefix of every Redis key, channel and queue.',
    DEFAULT_KEY_PREFIX,
  ),
  logLevel: settings.oneOf('LOG_LEVEL', 'error | warn | info | debug.', 'info', LOG_LEVELS),
  // The next two govern loading itself (the loader reads them before any other setting);
  // they are declared here so that they are documented and validated like the rest.
  secretsDir: settings.string(
    'SECRETS_DIR',
    'Folder of secret files named after the setting in lower case (e.g. internal_token), read for a secret set neither as X nor X_FILE. ' +
      'The compose devnet profile points it at the keys the devnet writes; leave it empty in production.',
    '',
  ),
  configWaitSeconds: settings.int(
    'CONFIG_WAIT_SECONDS',
    'At start, wait up to this long for CONFIG_FILE to appear (the compose devnet profile writes it while the services start).',
    0,
    [0, 3_600],
  ),
};

/**
 * `CHAINS` (config-file key `chains`): the chain deployments, `{ "<id>": { chainId, rpcUrl?,
 * wsUrl?, contracts } }`, checked by parseChainDeployments. Required; each program that reads it
 * says in `description` what it uses it for.
 */
export function chainsSetting(description: string): Setting<ChainDeployments> {
  return settings.json('CHAINS', description, undefined, (value) => {
    try {
      return parseChainDeployments(value);
    } catch (err) {
      throw new ConfigError(err instanceof Error ? err.message : 'invalid');
    }
  });
}
