/**
 * What of `npm start`'s own environment reaches which process (scripts/start.mjs): a secret
 * setting reaches only the processes of the services that declare it, and nothing secret
 * reaches any other process (Redis, the devnet's chains). A setting is marked secret once, in
 * its declaration (`secret: true`, config.ts's `settings.secret` and `optionalSecret`), and this
 * reads the services' declarations, so a secret added to a service is withheld from the others
 * with no list to keep up to date.
 */
import type { Setting } from '../settings/config';
import type { StackService } from './stack-processes';

/** A service's declared settings (its `*_SETTINGS`, the signer's `chainSettings(id)` too). */
export type SettingsSpec = Readonly<Record<string, Setting<unknown>>>;

/** The environment names under which the secret settings of `specs` may be given: `X` and `X_FILE`. */
export function secretEnvNames(specs: readonly SettingsSpec[]): Set<string> {
  return new Set(
    specs.flatMap((spec) =>
      Object.values(spec)
        .filter((s) => s.secret)
        .flatMap((s) => [s.env, `${s.env}_FILE`]),
    ),
  );
}

export interface StackEnv {
  /** What any process may inherit: no secret setting of any service, nothing withheld. */
  shared: Record<string, string>;
  /** Each service's own secret settings that are set, none withheld. */
  secrets: Record<StackService, Record<string, string>>;
}

/**
 * Splits `env` for the processes of the stack. `declarations`: each service's settings;
 * `withheld`: names no process inherits (the start script gives each process its own value, or
 * none: a folder of every secret, the Redis credentials it replaces with each process's own).
 */
export function splitStackEnv(
  env: Readonly<Record<string, string | undefined>>,
  declarations: Readonly<Record<StackService, readonly SettingsSpec[]>>,
  withheld: (name: string) => boolean,
): StackEnv {
  const set = Object.entries(env).filter((e): e is [string, string] => e[1] !== undefined && !withheld(e[0]));
  const owned = (names: Set<string>) => Object.fromEntries(set.filter(([name]) => names.has(name)));
  const gateway = secretEnvNames(declarations.gateway);
  const signer = secretEnvNames(declarations.signer);
  const indexer = secretEnvNames(declarations.indexer);
  const ledger = secretEnvNames(declarations.ledger);
  const secret = (name: string) => gateway.has(name) || signer.has(name) || indexer.has(name) || ledger.has(name);
  return {
    shared: Object.fromEntries(set.filter(([name]) => !secret(name))),
    secrets: { gateway: owned(gateway), signer: owned(signer), indexer: owned(indexer), ledger: owned(ledger) },
  };
}
