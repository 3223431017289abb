/**
 * The quoter key: the key a router whitelists (`isQuoter`) to authorise calls of its `quote()`
 * (the EIP-712 AmmVerification). The indexer signs one authorisation per block and side for its
 * ladder; the signer one per block and side for the firm quotes of signs with `amountIn`. Both
 * take the key the same way, declared here once:
 * - `QUOTER_KEY` (or `QUOTER_KEY_FILE`): a hex private key held in memory; or
 * - `QUOTER_PKCS11`: the PKCS#11 URI of a key that never leaves its module, with the token's PIN
 *   in `QUOTER_PKCS11_PIN_FILE` (read again when the token refuses it: pkcs11-signer.ts).
 * The indexer (one process, one chain) uses these names as they are; the signer, which serves
 * every chain, the same with the chain's id appended (`QUOTER_KEY_8453`, `QUOTER_PKCS11_8453`,
 * `QUOTER_PKCS11_PIN_8453`). Giving both a hex key and a module key is an error: which key
 * authorises must not depend on an order of precedence.
 *
 * SECURITY: errors name the setting and, for a module, the module, token and key label; never
 * the key, the PIN or a library's message that could quote them.
 */
import type { KeySigner, SignerBackend } from '@pmm/protocol';
import { ConfigError, secretFileReader, settings, type Setting } from '../settings/config';
import { openPkcs11Signer } from './pkcs11-signer';
import { pkcs11UriSetting, type Pkcs11KeyRef } from './pkcs11-uri';
import { createDigestSigner } from './secp256k1-signer';

/** Where the quoter key is: in memory (hex), or in a PKCS#11 module with its token's PIN. */
export type QuoterKeySource =
  | { kind: 'hex'; privateKey: string }
  | {
      kind: 'pkcs11';
      key: Pkcs11KeyRef;
      pin: string;
      /** Reads the PIN's secret file again (a new PIN after the token refused the old one); absent when the PIN is not in a file. */
      readPin?: () => Promise<string | undefined>;
      /** A sign the module has not answered in this long fails. */
      signTimeoutMs: number;
    };

/** The quoter settings' environment and config-file names: the indexer's, or the signer's of one chain. */
function names(chainId: number | undefined) {
  const id = chainId === undefined ? '' : `_${chainId}`;
  const env = { key: `QUOTER_KEY${id}`, pkcs11: `QUOTER_PKCS11${id}`, pin: `QUOTER_PKCS11_PIN${id}` };
  return {
    env,
    /** How a problem names each setting: `<ENV> (<config-file name>)`, as the loader does. */
    key: `${env.key} (quoterKey${id})`,
    pkcs11: `${env.pkcs11} (quoterPkcs11${id})`,
  };
}

/**
 * The three settings of a quoter key, named for the indexer (`chainId` undefined) or for one chain
 * of the signer. `keyDescription` says what the hex key is for and when it is needed there.
 */
export function quoterKeySettings(
  chainId: number | undefined,
  keyDescription: string,
): {
  quoterKey: Setting<string | undefined>;
  quoterPkcs11: Setting<Pkcs11KeyRef | undefined>;
  quoterPkcs11Pin: Setting<string | undefined>;
} {
  const { env } = names(chainId);
  return {
    quoterKey: settings.optionalSecret(env.key, keyDescription),
    quoterPkcs11: pkcs11UriSetting(
      env.pkcs11,
      `The quoter key in a hardware module instead of ${env.key}: its PKCS#11 URI, pkcs11:token=<label>;object=<key label>?module-path=<module .so> ` +
        '(slot-id=<n> instead of token, id=<%-encoded CKA_ID> instead of or beside object). The key never leaves the module. ' +
        `Not together with ${env.key}.`,
    ),
    quoterPkcs11Pin: settings.optionalSecret(env.pin, `User PIN of ${env.pkcs11}'s token; give it as ${env.pin}_FILE.`),
  };
}

/** The loaded values of {@link quoterKeySettings}. */
export interface QuoterKeyValues {
  quoterKey: string | undefined;
  quoterPkcs11: Pkcs11KeyRef | undefined;
  quoterPkcs11Pin: string | undefined;
}

/**
 * Where the quoter key comes from, or undefined when none is set and `required` is false (the
 * signer's chain without firm quotes).
 *
 * @throws ConfigError both a hex key and a module key; a module key without its PIN; none when required
 */
export function quoterKeySource(
  values: QuoterKeyValues,
  opts: { chainId?: number; required: boolean; signTimeoutMs: number; env?: NodeJS.ProcessEnv },
): QuoterKeySource | undefined {
  const n = names(opts.chainId);
  if (values.quoterPkcs11 !== undefined) {
    if (values.quoterKey !== undefined)
      throw new ConfigError(`${n.pkcs11}: ${n.env.key} is set too; give one quoter key`);
    if (values.quoterPkcs11Pin === undefined)
      throw new ConfigError(`${n.pkcs11}: the token's PIN is needed: set ${n.env.pin}_FILE`);
    const readPin = secretFileReader(n.env.pin, opts.env);
    return {
      kind: 'pkcs11',
      key: values.quoterPkcs11,
      pin: values.quoterPkcs11Pin,
      signTimeoutMs: opts.signTimeoutMs,
      ...(readPin ? { readPin } : {}),
    };
  }
  if (values.quoterKey !== undefined) return { kind: 'hex', privateKey: values.quoterKey };
  if (!opts.required) return undefined;
  throw new ConfigError(
    `${n.key}: required (or ${n.env.key}_FILE; or the key in a module: ${n.env.pkcs11} with ${n.env.pin}_FILE)`,
  );
}

/** What the owner of a quoter key in a module hears when it fails and comes back (logs). */
export interface QuoterKeyHooks {
  onFailure?(reason: string): void;
  /** The token refused the PIN for good: no login until a new PIN file or a restart. */
  onPinRefused?(reason: string): void;
  onRecovered?(): void;
}

/**
 * Opens the quoter key: in memory at once, or in its module (sessions opened, PIN checked, the
 * key found and checked to be secp256k1). A module key's signs are asynchronous and fail with
 * KeyUnavailableError while the module is down.
 *
 * @throws ConfigError naming the setting (and the module, token and label), never the key or PIN
 */
export async function openQuoterKey(
  source: QuoterKeySource,
  opts: QuoterKeyHooks & { chainId?: number; sessions?: number; backend?: SignerBackend } = {},
): Promise<KeySigner> {
  const n = names(opts.chainId);
  if (source.kind === 'hex') {
    try {
      return createDigestSigner(source.privateKey, opts.backend ? { backend: opts.backend } : {});
    } catch {
      // The key's text never enters the message.
      throw new ConfigError(`${n.key}: not a valid secp256k1 private key`);
    }
  }
  try {
    return await openPkcs11Signer({
      key: source.key,
      pin: source.pin,
      ...(source.readPin ? { readPin: source.readPin } : {}),
      ...(opts.sessions === undefined ? {} : { sessions: opts.sessions }),
      signTimeoutMs: source.signTimeoutMs,
      ...(opts.onFailure ? { onFailure: opts.onFailure } : {}),
      ...(opts.onPinRefused ? { onPinRefused: opts.onPinRefused } : {}),
      ...(opts.onRecovered ? { onRecovered: opts.onRecovered } : {}),
    });
  } catch (err) {
    // openPkcs11Signer's messages name the module, token and label and what is wrong; no PIN.
    throw new ConfigError(`${n.pkcs11}: ${err instanceof Error ? err.message : 'cannot open the key'}`);
  }
}
