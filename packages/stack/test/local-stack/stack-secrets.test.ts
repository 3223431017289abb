/**
 * `npm start`'s split of its environment (packages/core/src/stack/stack-secrets.ts, as scripts/start.mjs
 * calls it), over every secret setting the services declare: each reaches only the services
 * that declare it, and what every process inherits holds none. The started stack's processes are
 * checked the same way in stack-e2e.test.ts.
 */
import { KNOWN_CHAIN_IDS } from '@pmm/protocol';
import { splitStackEnv, type SettingsSpec, type StackService } from '@pmm/core';
import { GATEWAY_SETTINGS } from '@pmm/gateway';
import { INDEXER_SETTINGS, LEDGER_SETTINGS } from '@pmm/indexer';
import { SIGNER_SETTINGS, chainSettings } from '@pmm/signer';

const declarations: Record<StackService, SettingsSpec[]> = {
  gateway: [GATEWAY_SETTINGS],
  signer: [SIGNER_SETTINGS, ...KNOWN_CHAIN_IDS.map((id) => chainSettings(id))],
  indexer: [INDEXER_SETTINGS],
  ledger: [LEDGER_SETTINGS],
};
const SERVICES = Object.keys(declarations) as StackService[];
/** Every setting a service declares, by environment name, and whether it is marked secret. */
const declared = SERVICES.flatMap((service) =>
  declarations[service].flatMap((spec) => Object.values(spec).map((s) => ({ service, env: s.env, secret: s.secret }))),
);

it('security: every declared secret setting, and its _FILE form, reaches only the services that declare it', () => {
  const secrets = [...new Set(declared.filter((s) => s.secret).map((s) => s.env))];
  // The ones the review found handed to every process are among them.
  expect(secrets).toEqual(
    expect.arrayContaining([
      'SIGNER_PKCS11_PIN_8453',
      'QUOTER_PKCS11_PIN',
      'REDIS_PASSWORD',
      'REDIS_SENTINEL_PASSWORD',
      'OPS_TOKEN',
    ]),
  );
  for (const name of secrets.flatMap((env) => [env, `${env}_FILE`])) {
    const { shared, secrets: own } = splitStackEnv({ [name]: 'the-secret', PATH: '/bin' }, declarations, () => false);
    const owners = SERVICES.filter((s) =>
      declared.some((d) => d.service === s && d.secret && (name === d.env || name === `${d.env}_FILE`)),
    );
    expect({ name, shared }).toEqual({ name, shared: { PATH: '/bin' } });
    for (const service of SERVICES)
      expect({ name, service, holds: name in own[service] }).toEqual({
        name,
        service,
        holds: owners.includes(service),
      });
  }
});

it('behavior: what is not secret reaches every process; what is withheld, none', () => {
  const plain = declared.filter((s) => !s.secret).map((s) => s.env);
  const env = Object.fromEntries([...plain, 'OPS_TOKEN'].map((n) => [n, 'x']));
  const { shared, secrets } = splitStackEnv(env, declarations, (n) => n === 'REDIS_URL' || n === 'OPS_TOKEN');
  expect(Object.keys(shared).sort()).toEqual([...new Set(plain)].filter((n) => n !== 'REDIS_URL').sort());
  for (const service of SERVICES) expect(secrets[service]).toEqual({});
});
