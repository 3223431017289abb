/**
 * The signer's declared settings. Read once at boot (environment, then the optional
 * CONFIG_FILE JSON, then defaults); handlers never read `process.env`.
 *
 * Two layers:
 * - fixed settings ({@link SIGNER_SETTINGS}): port, Redis, internal token, served chains, …;
 * - per served chain ({@link chainSettings}): originRate and the signing-key sources. They
 *   can only be declared once SERVED_CHAINS is known, so {@link loadSignerConfig} loads the
 *   fixed layer first and the per-chain layer second, with the same loader and the same
 *   error messages (`<ENV> (<name>): <reason>`).
 *
 * Secrets (INTERNAL_TOKEN, SIGNER_KEY_<id>, SIGNER_KEYSTORE_PASSWORD_<id>, SIGNER_PKCS11_PIN_<id>,
 * QUOTER_KEY_<id>, QUOTER_PKCS11_PIN_<id>) come from the variable or from the file named by
 * `<ENV>_FILE`; the loader registers them for log redaction and never echoes them.
 */
import {
  chainsSetting,
  ConfigError,
  loadConfig,
  redisConnectionUrls,
  settings,
  type ConfigSources,
  SHARED_SETTINGS,
  OPERATOR_ENDPOINT_SETTINGS,
  SIGN_PATH_SETTINGS,
  DURABLE_WRITE_SETTINGS,
  throwConfigErrors,
  readConfigFile,
  DEFAULT_PKCS11_SESSIONS,
  pkcs11SignTimeoutSetting,
  pkcs11UriSetting,
  quoterKeySettings,
  quoterKeySource,
  secretFileReader,
  type ChainDeployments,
  type QuoterKeySource,
  type Pkcs11KeyRef,
  type DurableWriteConfig,
  type RedisRoleUrls,
  type Setting,
} from '@pmm/core';
import { DEFAULT_MAX_FEE, UINT256_MAX } from '@pmm/protocol';
import { DEFAULT_MAX_SIGN_DEADLINE_MS, DEFAULT_MAX_SIGNS_IN_FLIGHT } from './domain/sign-admission';

/** The reference router's validity, and the devnet's. */
export const DEFAULT_QUOTE_VALIDITY_SECONDS = 60;

function fail(reason: string): never {
  throw new ConfigError(reason);
}

/** A canonical base-10 uint256 (no sign, no leading zeros), as text or as a JSON number. */
function parseUint256(raw: unknown): bigint {
  const text = typeof raw === 'number' && Number.isSafeInteger(raw) ? String(raw) : raw;
  if (typeof text !== 'string' || !/^(0|[1-9][0-9]*)$/.test(text)) return fail('must be a base-10 unsigned integer');
  const value = BigInt(text);
  if (value > UINT256_MAX) fail('must be at most 2^256-1');
  return value;
}

function uint256Setting(env: string, description: string, def: bigint): Setting<bigint> {
  return { env, description, default: def, parse: parseUint256 };
}

/** An optional plain (non-secret) string: absent means undefined. */
function optionalString(env: string, description: string): Setting<string | undefined> {
  return {
    env,
    description,
    default: undefined,
    parse: (raw) => (typeof raw === 'string' && raw.length > 0 ? raw : fail('must be a non-empty string')),
  };
}

/** The fixed settings. Each entry's description is the documentation of the setting. */
export const SIGNER_SETTINGS = {
  ...SHARED_SETTINGS,
  ...SIGN_PATH_SETTINGS,
  ...DURABLE_WRITE_SETTINGS,
  ...OPERATOR_ENDPOINT_SETTINGS,
  // Replica mode only: each WAIT holds its connection for a replica round trip
  // (docs/decisions/0022-replica-mode-lanes-one-flight-each.md).
  redisAuditLanes: settings.int(
    'REDIS_AUDIT_LANES',
    'Audit connections of the signer in replica mode, each with one WAIT out at a time (records that find every one busy share the next WAIT): more shorten the wait for a connection when replicas are far, not the throughput. Each is a connection per signer replica to count in the records server’s maxclients. Fsync and none modes use one. Default 4.',
    4,
    [1, 64],
  ),
  port: settings.int(
    'PORT',
    'HTTP port of the signer (internal; only the gateway calls it). Default 8081.',
    8081,
    [0, 65535],
  ),
  host: settings.string(
    'HOST',
    'Interface to listen on; 127.0.0.1 locally, 0.0.0.0 in a container. Default 127.0.0.1.',
    '127.0.0.1',
  ),
  maxFee: uint256Setting(
    'MAX_FEE',
    `Largest accepted \`fee\`, in units of 0.1 bps. Default ${DEFAULT_MAX_FEE} (${Number(DEFAULT_MAX_FEE) / 1000}%).`,
    DEFAULT_MAX_FEE,
  ),
  auditRetentionDays: settings.int(
    'AUDIT_RETENTION_DAYS',
    'Days the audit trail keeps each signature record (who asked, when, what was signed) before trimming it; `settle` and `audit tx` can only attribute swaps signed within it. Default 180.',
    180,
    [1, 3650],
  ),
  dailySignatureQuota: settings.int(
    'DAILY_SIGNATURE_QUOTA',
    'Signatures an integrator may get per chain and UTC day, unless its record sets its own (dailySignatureQuota); past it, 429 QUOTA_EXCEEDED. Bounds what one integrator adds to the audit trail (about 0.9 KB a record); 0: no default quota.',
    100_000,
    [0, 1_000_000_000],
  ),
  chains: chainsSetting(
    'Chain deployments, the same map as the indexer reads (JSON, or the `chains` key of CONFIG_FILE). The signer uses only ' +
      "each served chain's rpcUrl and router: at start it asks the router for validity() and refuses to start when " +
      'QUOTE_VALIDITY_SECONDS_<id> differs. Default: none (the validity settings are used unchecked).',
    {},
  ),
  signerBackend: settings.oneOf(
    'SIGNER_BACKEND',
    'secp256k1 implementation: auto (native libsecp256k1 when it loads, else @noble/curves), libsecp256k1 (fail if absent) or noble. Default auto.',
    'auto',
    ['auto', 'libsecp256k1', 'noble'] as const,
  ),
  firmQuoteDeadlineMs: settings.int(
    'FIRM_QUOTE_DEADLINE_MS',
    "Longest a sign with amountIn waits for its firm amountOut (the book head from Redis, then one eth_call of the router's quote() at that block); past it, 503 SERVICE_UNAVAILABLE instead of calldata. Default 500 (well under a second, and room for a loaded node's round trip).",
    500,
    [10, 10_000],
  ),
  // docs/decisions/0071-past-capacity-a-fast-no.md
  maxSignsInFlight: settings.int(
    'MAX_SIGNS_IN_FLIGHT',
    `Signs this signer works on at once, from the request read to its answer; past it a sign is 503 SERVICE_UNAVAILABLE at once (Retry-After), and at most half of them wait for one chain's firm quotes (a slow node cannot take every sign). Set it to the sum of the SIGNER_MAX_IN_FLIGHT of the gateways that reach this signer, or less. Default ${DEFAULT_MAX_SIGNS_IN_FLIGHT}.`,
    DEFAULT_MAX_SIGNS_IN_FLIGHT,
    [2, 10_000],
  ),
  maxSignDeadlineMs: settings.int(
    'MAX_SIGN_DEADLINE_MS',
    `The longest deadline a sign has at this signer, counted from when its request reached it: the gateway sends what is left of the sign's own (its SIGN_DEADLINE_MS), and a larger value is cut to this one; a request without it (not from a gateway) gets this one. Each step that waits (the firm quote, the signature and its audit record) is started only while it can end in time, else 503 SERVICE_UNAVAILABLE with Retry-After. Default ${DEFAULT_MAX_SIGN_DEADLINE_MS} (the longest any aggregator here waits).`,
    DEFAULT_MAX_SIGN_DEADLINE_MS,
    [50, 10_000],
  ),
  pkcs11Sessions: settings.int(
    'PKCS11_SESSIONS',
    `Sessions the signer keeps open on each PKCS#11 key (SIGNER_PKCS11_<id>, QUOTER_PKCS11_<id>): the signs of that key that can run at once. Default ${DEFAULT_PKCS11_SESSIONS}.`,
    DEFAULT_PKCS11_SESSIONS,
    [1, 64],
  ),
  pkcs11SignTimeoutMs: pkcs11SignTimeoutSetting(),
};

/**
 * The chain's quoter key settings (core's quoter-key.ts, the indexer's with `_<id>`): QUOTER_KEY_<id>,
 * or QUOTER_PKCS11_<id> with QUOTER_PKCS11_PIN_<id>_FILE.
 */
function chainQuoterSettings(chainId: number): Record<string, Setting<unknown>> {
  const q = quoterKeySettings(
    chainId,
    `Private key (hex) of a quoter the chain-${chainId} router whitelists (isQuoter): it authorises the signer's quote() call that gives a sign with amountIn its exact amountOut (the indexer's key of that chain will do). ` +
      `Without it (or QUOTER_PKCS11_${chainId}), or without the chain's rpcUrl in CHAINS, a chain-${chainId} sign with amountIn answers 503; signs without amountIn are unaffected.`,
  );
  return {
    [`quoterKey_${chainId}`]: q.quoterKey,
    [`quoterPkcs11_${chainId}`]: q.quoterPkcs11,
    [`quoterPkcs11Pin_${chainId}`]: q.quoterPkcs11Pin,
  };
}

/**
 * The settings of one served chain. Key sources, first match wins:
 * 1. `SIGNER_KEY_<id>` (or `SIGNER_KEY_<id>_FILE`): 32-byte hex private key;
 * 2. `SIGNER_KEYSTORE_<id>`: path of an encrypted JSON keystore (geth/ethers v3), decrypted
 *    with the password from `SIGNER_KEYSTORE_PASSWORD_<id>` (or, better, `…_FILE`).
 * Or, alone (with either of the above it is a configuration error: which key signs must not
 * depend on an order of precedence), `SIGNER_PKCS11_<id>`: the PKCS#11 URI of a key in a
 * hardware module, with the token's PIN from `SIGNER_PKCS11_PIN_<id>_FILE`.
 * Config-file names are `signerKey_<id>`, `signerKeystore_<id>`, `signerKeystorePassword_<id>`,
 * `signerPkcs11_<id>`, `signerPkcs11Pin_<id>`, `originRate_<id>`, `quoteValiditySeconds_<id>`, `quoterKey_<id>`,
 * `quoterPkcs11_<id>` and `quoterPkcs11Pin_<id>`.
 */
export function chainSettings(chainId: number) {
  return {
    [`originRate_${chainId}`]: uint256Setting(
      `ORIGIN_RATE_${chainId}`,
      `originRate signed into every chain-${chainId} quote (uint256, opaque to the service; an integrator record may override it). Default 0.`,
      0n,
    ),
    [`quoteValiditySeconds_${chainId}`]: settings.int(
      `QUOTE_VALIDITY_SECONDS_${chainId}`,
      `Seconds the chain-${chainId} router accepts a quote after its timestamp (the router's validity); every sign answer's deadline is timestamp + this. Checked at start against the router's validity() when CHAINS names the chain's rpcUrl. Default 60 (the reference router's).`,
      DEFAULT_QUOTE_VALIDITY_SECONDS,
      [1, 86_400],
    ),
    [`signerKey_${chainId}`]: settings.optionalSecret(
      `SIGNER_KEY_${chainId}`,
      `Signing key of chain ${chainId}: 32-byte hex private key.`,
    ),
    [`signerKeystore_${chainId}`]: optionalString(
      `SIGNER_KEYSTORE_${chainId}`,
      `Signing key of chain ${chainId}: path of an encrypted JSON keystore (used when SIGNER_KEY_${chainId} is unset).`,
    ),
    [`signerKeystorePassword_${chainId}`]: settings.optionalSecret(
      `SIGNER_KEYSTORE_PASSWORD_${chainId}`,
      `Password of SIGNER_KEYSTORE_${chainId}; prefer SIGNER_KEYSTORE_PASSWORD_${chainId}_FILE.`,
    ),
    [`signerPkcs11_${chainId}`]: pkcs11UriSetting(
      `SIGNER_PKCS11_${chainId}`,
      `Signing key of chain ${chainId} in a hardware module: its PKCS#11 URI, pkcs11:token=<label>;object=<key label>?module-path=<module .so> ` +
        '(slot-id=<n> instead of token, id=<%-encoded CKA_ID> instead of or beside object). The key never leaves the module. ' +
        `Not together with SIGNER_KEY_${chainId} or SIGNER_KEYSTORE_${chainId}.`,
    ),
    [`signerPkcs11Pin_${chainId}`]: settings.optionalSecret(
      `SIGNER_PKCS11_PIN_${chainId}`,
      `User PIN of the token of SIGNER_PKCS11_${chainId}; give it as SIGNER_PKCS11_PIN_${chainId}_FILE.`,
    ),
    ...chainQuoterSettings(chainId),
  } as Record<string, Setting<unknown>>;
}

/** Where a chain's signing key comes from. The key text itself is a registered secret. */
export type KeySource =
  | { kind: 'hex'; env: string; privateKey: string }
  | { kind: 'keystore'; env: string; path: string; password: string }
  | {
      kind: 'pkcs11';
      env: string;
      key: Pkcs11KeyRef;
      pin: string;
      /** Reads the PIN's secret file again (a new PIN after the token refused the old one); absent when the PIN is not in a file. */
      readPin?: () => Promise<string | undefined>;
    };

export interface ChainSignerConfig {
  chainId: number;
  originRate: bigint;
  /** The router's validity: a quote's deadline is its timestamp + this many seconds. */
  quoteValiditySeconds: number;
  key: KeySource;
  /** The quoter key of the firm quotes (in memory or in a module); absent: none on this chain. */
  quoter?: QuoterKeySource;
}

/** The Redis durability settings (DURABLE_WRITE_SETTINGS) decide when an audit record is stored. */
export interface SignerConfig extends DurableWriteConfig, RedisRoleUrls {
  port: number;
  host: string;
  /** Host names /healthz, /readyz and /metrics answer (besides IPs and localhost); optional bearer token. */
  opsAllowedHosts: string[];
  opsToken: string | undefined;
  redisKeyPrefix: string;
  logLevel: 'error' | 'warn' | 'info' | 'debug';
  internalToken: string;
  servedChains: number[];
  requestTimeoutMs: number;
  /** Largest sign request body in bytes (413 above). */
  signBodyLimit: number;
  maxFee: bigint;
  signerBackend: 'auto' | 'libsecp256k1' | 'noble';
  /** Sessions kept open on each PKCS#11 key. */
  pkcs11Sessions: number;
  /** A sign a PKCS#11 module has not answered in this long fails and marks the key down. */
  pkcs11SignTimeoutMs: number;
  /** Deadline of a firm quote (a sign with amountIn), ms. */
  firmQuoteDeadlineMs: number;
  /** Signs worked on at once (past it: 503 at once). */
  maxSignsInFlight: number;
  /** The longest deadline a sign has here, ms (the gateway's budget is cut to it). */
  maxSignDeadlineMs: number;
  /** Days each audit record is kept. */
  auditRetentionDays: number;
  /** Default signatures per integrator, chain and UTC day (0: none). */
  dailySignatureQuota: number;
  /** Audit connections in replica mode. */
  redisAuditLanes: number;
  chains: Record<number, ChainSignerConfig>;
  /** Where the served chains live (only rpcUrl and router are used: check-quote-validity.ts). */
  deployments: ChainDeployments;
}

/** The message for a served chain with no key: names the chain and every way to give one. */
export function missingKeyMessage(chainId: number): string {
  return (
    `chain ${chainId} is served (SERVED_CHAINS) but has no signing key: set SIGNER_KEY_${chainId} ` +
    `(or SIGNER_KEY_${chainId}_FILE), or SIGNER_KEYSTORE_${chainId} with SIGNER_KEYSTORE_PASSWORD_${chainId}_FILE, ` +
    `or SIGNER_PKCS11_${chainId} with SIGNER_PKCS11_PIN_${chainId}_FILE`
  );
}

/**
 * Loads and validates the whole configuration. Throws {@link ConfigError} naming the setting
 * (or, for a missing key, the chain); never includes a secret value. Keys are not parsed here
 * (see load-signing-keys.ts): this only decides where each comes from.
 */
export function loadSignerConfig(sources: ConfigSources = {}): SignerConfig {
  // Every problem is collected (base settings and each chain's key) and reported at once.
  const problems: string[] = [];
  const collect = <T>(load: () => T): T | undefined => {
    try {
      return load();
    } catch (err) {
      if (!(err instanceof ConfigError)) throw err;
      problems.push(...err.problems);
      return undefined;
    }
  };
  // The file is read once for every layer; when it cannot be read, that is one more problem
  // and the settings it would have given are reported as missing.
  let file = sources.file;
  if (file === undefined) file = collect(() => readConfigFile(sources.env ?? process.env)) ?? {};
  sources = { ...sources, file };
  const base = collect(() => loadConfig(SIGNER_SETTINGS, sources));
  // The chains to check even when another base setting is wrong.
  let servedChains = base?.servedChains;
  if (!servedChains) {
    try {
      servedChains = loadConfig({ servedChains: SIGNER_SETTINGS.servedChains }, sources).servedChains;
    } catch {
      // already reported by the base settings
    }
  }
  // Second pass, per served chain (CONFIG_FILE is read again: once per chain, at boot only).
  const chains: Record<number, ChainSignerConfig> = {};
  for (const chainId of servedChains ?? []) {
    const chain = collect(() =>
      loadChainSigner(chainId, sources, base?.pkcs11SignTimeoutMs ?? SIGNER_SETTINGS.pkcs11SignTimeoutMs.default!),
    );
    if (chain) chains[chainId] = chain;
  }
  throwConfigErrors(problems);
  const { chains: deployments, ...fixed } = base!;
  return { ...fixed, ...redisConnectionUrls(fixed), chains, deployments };
}

function loadChainSigner(chainId: number, sources: ConfigSources, signTimeoutMs: number): ChainSignerConfig {
  const c = loadConfig(chainSettings(chainId), sources);
  // Optional: a chain without a quoter key has no firm quotes (firm-quote-chains.ts says so at start).
  const quoter = quoterKeySource(
    {
      quoterKey: c[`quoterKey_${chainId}`] as string | undefined,
      quoterPkcs11: c[`quoterPkcs11_${chainId}`] as Pkcs11KeyRef | undefined,
      quoterPkcs11Pin: c[`quoterPkcs11Pin_${chainId}`] as string | undefined,
    },
    { chainId, required: false, signTimeoutMs, env: sources.env },
  );
  const privateKey = c[`signerKey_${chainId}`] as string | undefined;
  const keystore = c[`signerKeystore_${chainId}`] as string | undefined;
  const password = c[`signerKeystorePassword_${chainId}`] as string | undefined;
  const pkcs11 = c[`signerPkcs11_${chainId}`] as Pkcs11KeyRef | undefined;
  const pin = c[`signerPkcs11Pin_${chainId}`] as string | undefined;
  let key: KeySource;
  if (pkcs11 !== undefined) {
    const other =
      privateKey !== undefined
        ? `SIGNER_KEY_${chainId}`
        : keystore !== undefined
          ? `SIGNER_KEYSTORE_${chainId}`
          : undefined;
    if (other !== undefined)
      throw new ConfigError(`SIGNER_PKCS11_${chainId}: chain ${chainId} has two signing keys (${other} too): give one`);
    if (pin === undefined) {
      throw new ConfigError(
        `SIGNER_PKCS11_${chainId}: chain ${chainId}'s token needs its PIN: set SIGNER_PKCS11_PIN_${chainId}_FILE (or SIGNER_PKCS11_PIN_${chainId})`,
      );
    }
    const readPin = secretFileReader(`SIGNER_PKCS11_PIN_${chainId}`, sources.env);
    key = { kind: 'pkcs11', env: `SIGNER_PKCS11_${chainId}`, key: pkcs11, pin, ...(readPin ? { readPin } : {}) };
  } else if (privateKey !== undefined) key = { kind: 'hex', env: `SIGNER_KEY_${chainId}`, privateKey };
  else if (keystore !== undefined) {
    if (password === undefined) {
      throw new ConfigError(
        `SIGNER_KEYSTORE_${chainId}: chain ${chainId} keystore needs a password: set SIGNER_KEYSTORE_PASSWORD_${chainId}_FILE (or SIGNER_KEYSTORE_PASSWORD_${chainId})`,
      );
    }
    key = { kind: 'keystore', env: `SIGNER_KEYSTORE_${chainId}`, path: keystore, password };
  } else throw new ConfigError(missingKeyMessage(chainId));
  return {
    chainId,
    originRate: c[`originRate_${chainId}`] as bigint,
    quoteValiditySeconds: c[`quoteValiditySeconds_${chainId}`] as number,
    key,
    ...(quoter ? { quoter } : {}),
  };
}
