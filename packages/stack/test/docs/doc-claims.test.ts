/**
 * What the documents claim, read against the code (the settings tables are generated and checked
 * by config-docs.test.ts; references by doc-references.test.ts): the Redis keys the operations
 * guide lists (the durable data among them) and their Redis roles, the settings `.env.example` and the service READMEs
 * name, the flags of the operator commands, the error codes of the API, and who the rate limit
 * counts.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { SHARED_SETTINGS, redisKeyRole, redisKeys, type Setting } from '@pmm/core';
import { GATEWAY_SETTINGS } from '@pmm/gateway';
import { INDEXER_SETTINGS, LEDGER_SETTINGS } from '@pmm/indexer';
import { ERROR_CODES, KNOWN_CHAIN_IDS } from '@pmm/protocol';
import { SIGNER_SETTINGS, chainSettings } from '@pmm/signer';
import { KEYS_USAGE } from '../../../../services/gateway/src/keys/keys-command';
import { AUDIT_USAGE } from '../../../operator/src/audit/audit-command';
import { SETTLE_USAGE } from '../../../operator/src/settle/settle-command';

const root = path.resolve(__dirname, '..', '..', '..', '..');
const read = (file: string) => readFileSync(path.join(root, file), 'utf8');
/** The operations guide: every page of docs/operations, in name order. */
const operationsGuide = () =>
  readdirSync(path.join(root, 'docs', 'operations'))
    .filter((file) => file.endsWith('.md'))
    .sort()
    .map((file) => read(`docs/operations/${file}`))
    .join('\n');

type Spec = Record<string, Setting<unknown>>;
const specs: Spec[] = [
  SHARED_SETTINGS,
  GATEWAY_SETTINGS,
  INDEXER_SETTINGS,
  LEDGER_SETTINGS,
  SIGNER_SETTINGS,
  ...KNOWN_CHAIN_IDS.map((id) => chainSettings(id) as Spec),
];
/** Every environment name a service reads (secrets also as `<NAME>_FILE`), `<id>` for a chain id. */
const declared = new Set(
  specs.flatMap((spec) =>
    Object.values(spec).flatMap((s) => {
      const names = s.secret ? [s.env, `${s.env}_FILE`] : [s.env];
      return [...names, ...names.map((n) => n.replace(/_(8453|56|4663)(?=_|$)/, '_<id>'))];
    }),
  ),
);

describe('the operations guide against the code', () => {
  it('behavior: the Redis key table lists every key the services use (the durable data included)', () => {
    const guide = operationsGuide();
    const table = guide.slice(guide.indexOf('| key '), guide.indexOf('\n\n', guide.indexOf('| key ')));
    const patterns = [...table.matchAll(/^\| `([^`]+)`/gm)].map(
      ([, key]) =>
        new RegExp(
          `^${key!
            .replace(/[.+?^${}()|[\]\\]/g, '\\$&')
            .replace(/<[^>]+>/g, '[^:]+')
            .replace(/\*/g, '.*')}$`,
        ),
    );
    const keys = redisKeys('pmm');
    const missing = Object.entries(keys)
      .map(([name, key]) => {
        const sample = (key as (...args: string[]) => string)('X', 'X');
        // The queue prefix names a family of keys (BullMQ's).
        return { name, sample: name === 'queuePrefix' ? `${sample}:X` : sample };
      })
      .filter(({ sample }) => !patterns.some((p) => p.test(sample)))
      .map(({ name, sample }) => `${name} (${sample})`);
    expect(missing).toEqual([]);
  });

  it("behavior: the key table's role of each key is core's (redis-roles.ts): the server it is on", () => {
    const guide = operationsGuide();
    const table = guide.slice(guide.indexOf('| key '), guide.indexOf('\n\n', guide.indexOf('| key ')));
    const rows = [...table.matchAll(/^\| `([^`]+)` *\|[^|]*\| *(records|rebuildable) *\|/gm)];
    expect(rows.length).toBe(table.split('\n').length - 2);
    // A sample of each pattern: each placeholder and wildcard stands for one name.
    const wrong = rows
      .map(([, key, role]) => ({ key: key!, role, actual: redisKeyRole(key!.replace(/<[^>]+>|\*/g, 'x'), 'pmm') }))
      .filter(({ role, actual }) => role !== actual);
    expect(wrong).toEqual([]);
  });

  it('behavior: every flag the guide gives the operator commands is one they accept', () => {
    const usage = `${KEYS_USAGE}\n${AUDIT_USAGE}\n${SETTLE_USAGE}`;
    const lines = [operationsGuide(), read('README.md'), read('docs/local-stack.md')].flatMap((text) =>
      text
        .split('\n')
        .filter((l) => /(npm run (keys|audit|settle) --|^\s*(\$ )?keys |(audit|settle|keys)\.js )/.test(l)),
    );
    const flags = new Set(lines.flatMap((l) => [...l.matchAll(/(?<![\w-])--([a-z][a-z-]*)/g)].map((m) => m[1]!)));
    const unknown = [...flags].filter((f) => !new RegExp(`--${f}\\b`).test(usage));
    // Flags of other programs on the same lines (docker, jq, date).
    expect(unknown.filter((f) => !['rm', 'network', 'target', 'file-', 'date'].includes(f))).toEqual([]);
  });
});

describe('settings named in the documents', () => {
  it('behavior: every setting .env.example sets or shows commented is one a service reads, or one compose substitutes', () => {
    const compose = read('docker-compose.yml');
    const substituted = new Set([...compose.matchAll(/\$\{([A-Z0-9_]+)/g)].map((m) => m[1]!));
    // Build arguments passed from the environment by name.
    substituted.add('NODE_IMAGE');
    const named = [...read('.env.example').matchAll(/^#?\s*([A-Z][A-Z0-9_]+)=/gm)].map((m) => m[1]!);
    const unknown = named.filter(
      (n) => !declared.has(n) && !declared.has(n.replace(/_(8453|56|4663)(?=_|$)/, '_<id>')),
    );
    expect(unknown.filter((n) => !substituted.has(n))).toEqual([]);
  });

  it('behavior: a setting the comments of .env.example point to is in the file (not a secret: those stay out)', () => {
    const example = read('.env.example');
    const shown = new Set(
      [...example.matchAll(/\b([A-Z][A-Z0-9_]+)=/g)].map((m) => m[1]!.replace(/_(8453|56|4663)(?=_|$)/, '_<id>')),
    );
    const nonSecret = new Set(
      specs.flatMap((spec) =>
        Object.values(spec)
          .filter((s) => !s.secret)
          .map((s) => s.env.replace(/_(8453|56|4663)(?=_|$)/, '_<id>')),
      ),
    );
    const mentioned = [...example.matchAll(/\b([A-Z][A-Z0-9]*(?:_(?:[A-Z0-9]+|<id>))+)/g)]
      .map((m) => m[1]!.replace(/_(8453|56|4663)(?=_|$)/, '_<id>'))
      .filter((n) => nonSecret.has(n));
    expect([...new Set(mentioned)].filter((n) => !shown.has(n))).toEqual([]);
  });

  it('behavior: the service READMEs name only settings the service reads, and the signer README every one', () => {
    const tableSettings = (file: string) =>
      [...read(file).matchAll(/^\| `([A-Z][A-Z0-9_<>]+)`/gm)].map((m) => m[1]!).filter((n) => /_|^[A-Z]+$/.test(n));
    for (const file of ['services/signer/README.md', 'services/gateway/README.md', 'services/indexer/README.md']) {
      const unknown = tableSettings(file).filter((n) => !declared.has(n) && !declared.has(`${n}_FILE`));
      expect([file, unknown]).toEqual([file, []]);
    }
    const signerReadme = read('services/signer/README.md');
    const signerSettings = [SHARED_SETTINGS, SIGNER_SETTINGS, chainSettings(8453) as Spec].flatMap((spec) =>
      Object.values(spec).map((s) => s.env.replace(/_8453(?=_|$)/, '_<id>')),
    );
    expect(signerSettings.filter((env) => !signerReadme.includes(`\`${env}`))).toEqual([]);
  });
});

describe('the API document against the code', () => {
  it('behavior: api-refusals.md documents every error code the service has, and names no other', () => {
    const api = read('docs/api-refusals.md');
    const rows = [...api.matchAll(/^\| `([A-Z_]+)`/gm)].map((m) => m[1]!);
    expect(new Set(rows)).toEqual(new Set(ERROR_CODES));
  });

  it("behavior: the rate limit is documented as the integrator's, as the code counts it", () => {
    // The window counter is keyed by integrator, so every key of one integrator shares it.
    expect(redisKeys('pmm').rateLimit('acme', 0)).toBe('pmm:rl:acme:0');
    const section = (text: string, heading: string) =>
      text.slice(text.indexOf(heading), text.indexOf('\n## ', text.indexOf(heading) + 1));
    expect(section(read('docs/api-refusals.md'), '## Rate limits')).toMatch(
      /Each integrator has a request budget per window/,
    );
    for (const file of ['docs/api.md', 'docs/api-refusals.md', 'README.md', 'services/gateway/README.md'])
      expect([
        file,
        /per-key rate limit|Each API key has a request budget|rate limit per key/i.test(read(file)),
      ]).toEqual([file, false]);
  });
});
