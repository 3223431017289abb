/**
 * The settings each process of the stack starts with (what `npm start` and the tests' system
 * under test both use): every service reads the same Redis and chains, and gets only its own
 * secrets.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import {
  SERVICE_MAIN,
  SERVICE_NODE_FLAGS,
  gatewayEnv,
  indexerEnv,
  ledgerEnv,
  serviceCommand,
  signerEnv,
  type StackCommon,
} from '../../src';

const common: StackCommon = { redisUrl: 'redis://127.0.0.1:1', configFile: '/tmp/chains.json', chainIds: [8453, 56] };
const SECRETS = ['INTERNAL_TOKEN', 'DEV_API_KEY', 'QUOTER_KEY', 'QUOTER_KEY_FILE', 'SIGNER_KEY_8453', 'SIGNER_KEY_56'];
const secretsIn = (env: Record<string, string>) => SECRETS.filter((name) => name in env).sort();

const indexer = indexerEnv(common, { chainId: 56, port: 9001, quoterKey: '0xq' });
const ledger = ledgerEnv(common, { chainId: 56, port: 9005 });
const signer = signerEnv(common, {
  port: 9002,
  internalToken: 'token',
  signerKeys: { SIGNER_KEY_8453: '0xa', SIGNER_KEY_56: '0xb' },
});
const gateway = gatewayEnv(common, {
  port: 9003,
  opsPort: 9004,
  signerPort: 9002,
  internalToken: 'token',
  devApiKey: 'pmm_dev_key',
  whitelist: ['0xuser1', '0xuser2'],
});

describe('the stack processes', () => {
  it('behavior: every service reads the same Redis, chains file and served chains', () => {
    for (const env of [indexer, ledger, signer, gateway])
      expect(env).toMatchObject({
        REDIS_URL: 'redis://127.0.0.1:1',
        CONFIG_FILE: '/tmp/chains.json',
        SERVED_CHAINS: '8453,56',
      });
  });

  it('behavior: each service gets only its own secrets', () => {
    expect(secretsIn(indexer)).toEqual(['QUOTER_KEY']);
    expect(secretsIn(ledger)).toEqual([]);
    expect(secretsIn(signer)).toEqual(['INTERNAL_TOKEN', 'SIGNER_KEY_56', 'SIGNER_KEY_8453']);
    expect(secretsIn(gateway)).toEqual(['DEV_API_KEY', 'INTERNAL_TOKEN']);
  });

  it("behavior: the ports, the chain, the ledger's tracer, the signer URL and the development key whitelist", () => {
    expect(indexer).toMatchObject({ CHAIN_ID: '56', PORT: '9001' });
    // anvil's parity traces, kept from mining (record 0072): the devnet ledger's tracer.
    expect(ledger).toMatchObject({ CHAIN_ID: '56', PORT: '9005', LEDGER_TRACER: 'parity' });
    expect(signer.PORT).toBe('9002');
    expect(gateway).toMatchObject({
      PORT: '9003',
      OPS_PORT: '9004',
      SIGNER_URL: 'http://127.0.0.1:9002',
      DEV_API_KEY_WHITELIST: '0xuser1,0xuser2',
    });
  });

  it('behavior: a service runs its build with the V8 flags production uses', () => {
    const root = path.resolve(__dirname, '..', '..', '..', '..');
    for (const service of ['gateway', 'signer', 'indexer', 'ledger'] as const) {
      const { command, args } = serviceCommand(service, root);
      expect(command).toBe(process.execPath);
      expect(args).toEqual([...SERVICE_NODE_FLAGS, path.join(root, SERVICE_MAIN[service])]);
      // The entry point is the one the build writes (package.json "main" sits beside it).
      expect(existsSync(path.join(root, SERVICE_MAIN[service].replace(/dist\/(.*)\.js$/, 'src/$1.ts')))).toBe(true);
    }
  });
});
