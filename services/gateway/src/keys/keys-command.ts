/**
 * The operator's API-key commands (the logic behind `cli/keys.ts`), separate from process
 * concerns so that tests run them in-process against a real Redis.
 *
 * A key is printed exactly once, by `create` and `rotate`; nothing can show it again (only
 * its SHA-256 is stored). `list` shows the public keyId, never the key.
 */
import { CommandLineError, ConfigError, parseCommandLine, replaceFile, type RedisClient } from '@pmm/core';
import { INTEGRATOR_ID_PATTERN, isIntegratorId } from '@pmm/protocol';
import { readFileSync } from 'node:fs';
import { InvalidRecordError, type ApiKeyStore, type IntegratorUpdate } from './api-key-store';
import { exportKeys, importKeys, parseKeyBackup } from './key-backup';

export const KEYS_USAGE = `usage: keys <command> [options]

  create  --integrator <id> [--name <text>] [--whitelist <addr,addr>] [--chains <id,id>|all]
          [--rate <requests>/<seconds>|default] [--origin-rate <chainId>=<uint256>]...
          [--daily-quota <signatures per chain and UTC day>|default]
          Creates the integrator and its first key; prints the key ONCE.
  list    [--json]          Keys with integrator, whitelist, chains, rate limit, state (never the key).
  update  --integrator <id> [--name <text>] [--whitelist-add <addr,...>] [--whitelist-remove <addr,...>]
          [--chains <id,id>|all] [--rate <requests>/<seconds>|default]
          [--origin-rate <chainId>=<uint256>|<chainId>=]... [--daily-quota <n>|default]
          [--disable|--enable]
  revoke  --key <keyId>     Deletes the key for good.
  disable --key <keyId>     Refuses the key (401) until enabled again.
  enable  --key <keyId>
  rotate  --integrator <id> [--revoke-old] | --key <keyId>
          Issues a new key for the integrator and prints it ONCE. With --key, the old key is
          revoked; with --revoke-old, all the integrator's other keys are.
  export  [--file <path>]   Every integrator and key record as JSON (keys stay hashed), to
                            stdout or a file: backup and migration. Prefer --file: the file
                            is (re)created readable by its owner only (mode 600), which a
                            shell redirect does not do.
  import  --file <path|->   Writes the records of an export (- = stdin); records with the same
          [--restore-revoked]
                            integrator id or key hash are replaced, nothing else is touched.
                            Every record is checked first (the rules of create/update); a file
                            with a bad record is refused whole, naming each, and nothing is written.
                            A key revoked here is refused (named) unless --restore-revoked; the
                            file's revoked keys are revoked here; what is disabled here stays so.

Changes take effect on every gateway within 1 s.`;

class UsageError extends Error {}

interface Args {
  command: string;
  values: Record<string, string>;
  /** `--origin-rate`, the one option the usage lets repeat (`...`): every value given. */
  originRates: string[];
  flags: Set<string>;
}

/** The options with a value, each at most once. */
const VALUES = [
  'chains',
  'daily-quota',
  'file',
  'integrator',
  'key',
  'name',
  'rate',
  'whitelist',
  'whitelist-add',
  'whitelist-remove',
] as const;
const FLAGS = ['json', 'revoke-old', 'disable', 'enable', 'restore-revoked'] as const;

/**
 * The command line, strictly (core's parseCommandLine, as the other operator commands): an
 * unknown option, or one given twice but `--origin-rate` (once per chain), is a usage error.
 */
function parseKeysArgs(argv: readonly string[]): Args {
  const parsed = parseCommandLine(argv, { values: VALUES, lists: ['origin-rate'], flags: FLAGS });
  const [command = 'help', ...extra] = parsed.positionals;
  if (extra.length > 0) throw new UsageError(`unexpected argument "${extra[0]}"`);
  return { command, values: parsed.values, originRates: parsed.lists['origin-rate'] ?? [], flags: parsed.flags };
}

function one(args: Args, name: string): string | undefined {
  return args.values[name];
}

function required(args: Args, name: string): string {
  const v = one(args, name);
  if (v === undefined || v === '') throw new UsageError(`--${name} is required`);
  return v;
}

// The option parsers below only split and convert; what a record may hold (addresses, known
// chains, names, uint256 values) is judged once, by the store's record rules, for create,
// update and import alike (protocol's integratorRecordProblems).

function addresses(text: string | undefined): string[] {
  if (text === undefined) return [];
  return text
    .split(',')
    .map((s) => s.trim().toLowerCase())
    .filter(Boolean);
}

function chainId(text: string): number {
  if (!/^[0-9]{1,15}$/.test(text)) throw new UsageError(`not a chain id: ${JSON.stringify(text)}`);
  return Number(text);
}

function chains(text: string): number[] {
  return text === 'all' ? [] : text.split(',').map((s) => chainId(s.trim()));
}

function rate(text: string): { requests: number; windowSeconds: number } {
  if (text === 'default') return { requests: 0, windowSeconds: 0 };
  const m = /^([1-9][0-9]{0,9})\/([1-9][0-9]{0,5})$/.exec(text);
  if (!m) throw new UsageError(`--rate must be <requests>/<seconds> (e.g. 600/60) or "default"`);
  return { requests: Number(m[1]), windowSeconds: Number(m[2]) };
}

/** `--daily-quota`: a count, or "default" (0: the signer's DAILY_SIGNATURE_QUOTA). */
function dailyQuota(text: string): number {
  if (text === 'default') return 0;
  if (!/^[1-9][0-9]{0,9}$/.test(text)) throw new UsageError('--daily-quota must be a positive integer or "default"');
  return Number(text);
}

function originRates(list: readonly string[], allowRemove: boolean): Record<string, string | null> {
  const out: Record<string, string | null> = {};
  for (const item of list) {
    const [chain = '', value = ''] = item.split('=');
    chainId(chain);
    // Once per chain: the last of two would be kept silently.
    if (chain in out) throw new UsageError(`--origin-rate: chain ${chain} given more than once`);
    if (value === '' && !allowRemove) throw new UsageError(`--origin-rate ${chain}= needs a uint256 decimal value`);
    out[chain] = value === '' ? null : value;
  }
  return out;
}

function describeRate(r: { requests: number; windowSeconds: number }): string {
  return r.requests > 0 ? `${r.requests}/${r.windowSeconds || 'default'}s` : 'default';
}

/**
 * Runs one command; `print` receives each output line. Returns the process exit code
 * (0 ok, 1 failure, 2 usage error).
 */
export async function runKeysCommand(
  argv: readonly string[],
  store: ApiKeyStore,
  print: (line: string) => void,
  /** Redis and key prefix: needed by `export` only (it scans for integrators). */
  backend?: { redis: RedisClient; prefix: string },
): Promise<number> {
  let args: Args;
  try {
    args = parseKeysArgs(argv);
    return await dispatch(args, store, print, backend);
  } catch (err) {
    if (err instanceof UsageError || err instanceof CommandLineError || err instanceof ConfigError) {
      print(`error: ${err.message}`);
      print(KEYS_USAGE);
      return 2;
    }
    // A record that breaks the rules (an option's value, or an import file): nothing was written.
    if (err instanceof InvalidRecordError) {
      print(`error: ${err.message}`);
      return 2;
    }
    print(`error: ${err instanceof Error ? err.message : String(err)}`);
    return 1;
  }
}

function printNewKey(print: (line: string) => void, apiKey: string, keyId: string, integratorId: string): void {
  print(`integrator: ${integratorId}`);
  print(`keyId: ${keyId}`);
  print(`API key: ${apiKey}`);
  print('Store this key now: it is not stored anywhere and cannot be shown again.');
}

async function dispatch(
  args: Args,
  store: ApiKeyStore,
  print: (line: string) => void,
  backend: { redis: RedisClient; prefix: string } | undefined,
): Promise<number> {
  switch (args.command) {
    case 'export': {
      if (!backend) throw new Error('export needs the Redis connection');
      const text = JSON.stringify(await exportKeys(store, backend.redis, backend.prefix), null, 2);
      const file = one(args, 'file');
      if (file === undefined || file === '-') print(text);
      else {
        // A new file at mode 600 renamed over the old: an existing world-readable file is replaced,
        // not rewritten with its old mode.
        replaceFile(file, `${text}\n`);
        const doc = JSON.parse(text) as { integrators: unknown[]; apiKeys: unknown[]; revokedApiKeys: unknown[] };
        print(
          `exported ${doc.integrators.length} integrators, ${doc.apiKeys.length} keys and ${doc.revokedApiKeys.length} revoked key hashes to ${file}`,
        );
      }
      return 0;
    }
    case 'import': {
      const file = required(args, 'file');
      const text = readFileSync(file === '-' ? 0 : file, 'utf8');
      const outcome = await importKeys(store, parseKeyBackup(text), {
        restoreRevoked: args.flags.has('restore-revoked'),
      });
      print(
        `imported ${outcome.integrators} integrators and ${outcome.apiKeys} keys; ${outcome.revoked} revoked keys held revoked`,
      );
      if (outcome.keptDisabled.length > 0)
        print(`kept disabled here (enabled in the file): ${outcome.keptDisabled.join(', ')}`);
      return 0;
    }
    case 'create': {
      const id = required(args, 'integrator');
      if (!isIntegratorId(id)) throw new UsageError(`integrator id must match ${INTEGRATOR_ID_PATTERN}`);
      if (await store.getIntegrator(id))
        throw new Error(`integrator "${id}" exists: use "update", or "rotate" for a new key`);
      const origin = originRates(args.originRates, false);
      const quotaText = one(args, 'daily-quota');
      await store.putIntegrator({
        id,
        name: one(args, 'name') ?? id,
        whitelist: addresses(one(args, 'whitelist')),
        chains: chains(one(args, 'chains') ?? 'all'),
        rateLimit: rate(one(args, 'rate') ?? 'default'),
        disabled: false,
        ...(Object.keys(origin).length > 0 ? { originRate: origin as Record<string, string> } : {}),
        ...(quotaText !== undefined && dailyQuota(quotaText) > 0 ? { dailySignatureQuota: dailyQuota(quotaText) } : {}),
      });
      const { apiKey, record } = await store.issueKey(id);
      printNewKey(print, apiKey, record.keyId, id);
      return 0;
    }
    case 'list': {
      const rows = (await store.list()).map(({ key, integrator }) => ({
        keyId: key.keyId,
        integrator: key.integratorId,
        name: integrator?.name ?? '(missing)',
        whitelist: integrator?.whitelist ?? [],
        chains: integrator && integrator.chains.length > 0 ? integrator.chains : 'all',
        rateLimit: integrator ? describeRate(integrator.rateLimit) : '-',
        dailySignatureQuota: integrator?.dailySignatureQuota ?? 'default',
        originRate: integrator?.originRate ?? {},
        keyDisabled: key.disabled,
        integratorDisabled: integrator?.disabled ?? true,
        createdAt: new Date(key.createdAt).toISOString(),
      }));
      if (args.flags.has('json')) {
        print(JSON.stringify(rows, null, 2));
        return 0;
      }
      if (rows.length === 0) print('no keys');
      for (const r of rows) {
        const state = r.keyDisabled ? 'key disabled' : r.integratorDisabled ? 'integrator disabled' : 'active';
        print(
          `${r.keyId}  integrator=${r.integrator} (${r.name})  ${state}  chains=${Array.isArray(r.chains) ? r.chains.join(',') : r.chains}  rate=${r.rateLimit}  whitelist=${r.whitelist.join(',') || '-'}  created=${r.createdAt}`,
        );
      }
      return 0;
    }
    case 'update': {
      const id = required(args, 'integrator');
      if (args.flags.has('disable') && args.flags.has('enable'))
        throw new UsageError('--disable and --enable together');
      const update: IntegratorUpdate = {
        whitelistAdd: addresses(one(args, 'whitelist-add')),
        whitelistRemove: addresses(one(args, 'whitelist-remove')),
        originRate: originRates(args.originRates, true),
      };
      const name = one(args, 'name');
      if (name !== undefined) update.name = name;
      const chainText = one(args, 'chains');
      if (chainText !== undefined) update.chains = chains(chainText);
      const rateText = one(args, 'rate');
      if (rateText !== undefined) update.rateLimit = rate(rateText);
      const quotaText = one(args, 'daily-quota');
      if (quotaText !== undefined) update.dailySignatureQuota = dailyQuota(quotaText);
      if (args.flags.has('disable')) update.disabled = true;
      if (args.flags.has('enable')) update.disabled = false;
      const next = await store.updateIntegrator(id, update);
      print(
        `updated ${id}: whitelist=${next.whitelist.join(',') || '-'} chains=${next.chains.join(',') || 'all'} rate=${describeRate(next.rateLimit)} ${next.disabled ? 'disabled' : 'active'}`,
      );
      return 0;
    }
    case 'revoke': {
      const keyId = required(args, 'key');
      await store.revokeKey(keyId);
      print(`revoked ${keyId}`);
      return 0;
    }
    case 'disable':
    case 'enable': {
      const keyId = required(args, 'key');
      await store.setKeyDisabled(keyId, args.command === 'disable');
      print(`${args.command}d ${keyId}`);
      return 0;
    }
    case 'rotate': {
      const keyId = one(args, 'key');
      const old = keyId ? await store.findByKeyId(keyId) : undefined;
      if (keyId && !old) throw new Error(`no key "${keyId}"`);
      const integratorId = old ? old.key.integratorId : required(args, 'integrator');
      const before = (await store.list()).filter((l) => l.key.integratorId === integratorId);
      const { apiKey, record } = await store.issueKey(integratorId);
      const revoke = old ? [old] : args.flags.has('revoke-old') ? before : [];
      for (const l of revoke) await store.revokeKey(l.key.keyId);
      printNewKey(print, apiKey, record.keyId, integratorId);
      if (revoke.length > 0) print(`revoked: ${revoke.map((l) => l.key.keyId).join(', ')}`);
      return 0;
    }
    case 'help':
    case '--help':
    case '-h':
      print(KEYS_USAGE);
      return 0;
    default:
      throw new UsageError(`unknown command "${args.command}"`);
  }
}
