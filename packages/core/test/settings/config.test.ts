import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import {
  ConfigError,
  describeConfig,
  loadConfig,
  maskUrl,
  parseChainDeployments,
  redactText,
  secretFileReader,
  settings,
} from '@pmm/core';

const spec = {
  port: settings.int('PORT', 'listen port', 8080, [1, 65535]),
  redisUrl: settings.url('REDIS_URL', 'Redis URL', 'redis://127.0.0.1:6379', ['redis', 'rediss']),
  token: settings.secret('INTERNAL_TOKEN', 'shared token'),
  verbose: settings.bool('VERBOSE', 'more logs', false),
};

describe('loadConfig', () => {
  it('default: uses defaults and the required secret from the environment', () => {
    const cfg = loadConfig(spec, { env: { INTERNAL_TOKEN: 'token-from-env-123' }, file: {} });
    expect(cfg).toEqual({
      port: 8080,
      redisUrl: 'redis://127.0.0.1:6379',
      token: 'token-from-env-123',
      verbose: false,
    });
  });

  it('behavior: environment overrides the file, the file overrides defaults', () => {
    const cfg = loadConfig(spec, {
      env: { PORT: '9000', INTERNAL_TOKEN: 'abcdefgh1' },
      file: { port: 7000, verbose: true },
    });
    expect(cfg.port).toBe(9000);
    expect(cfg.verbose).toBe(true);
  });

  it('behavior: a secret can come from <ENV>_FILE and is registered for redaction', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'cfg-'));
    const file = path.join(dir, 'token');
    writeFileSync(file, 'file-secret-value-42\n');
    const cfg = loadConfig(spec, { env: { INTERNAL_TOKEN_FILE: file }, file: {} });
    expect(cfg.token).toBe('file-secret-value-42');
    expect(redactText('token=file-secret-value-42')).toBe('token=[redacted]');
  });

  it('error: a value echoed in an error has its URL credentials masked', () => {
    const message = (env: NodeJS.ProcessEnv, s: Record<string, ReturnType<typeof settings.url>> = spec as never) => {
      try {
        loadConfig(s, { env: { INTERNAL_TOKEN: 'abcdefgh4', ...env }, file: {} });
      } catch (err) {
        return (err as Error).message;
      }
      throw new Error('no error');
    };
    const wrongScheme = message({ REDIS_URL: 'http://admin:hunter2-redis@redis.internal:6379' });
    expect(wrongScheme).toBe('REDIS_URL (redisUrl): must use redis or rediss, got "http://***@redis.internal:6379"');
    const chains = {
      chains: settings.json('CHAINS', 'chains', undefined, () => {
        throw new ConfigError('bad');
      }),
    };
    const inJson = message({ CHAINS: '{"8453":{"rpcUrl":"https://u:rpc-pass-1@rpc.example/x"}}' }, chains as never);
    expect(inJson).not.toContain('rpc-pass-1');
    expect(inJson).toContain('https://***@rpc.example/***');
  });

  it("error: a hosted node's key in an echoed URL's path or query is masked", () => {
    const chains = {
      chains: settings.json('CHAINS', 'chains', undefined, () => {
        throw new ConfigError('bad');
      }),
    };
    let message = '';
    try {
      loadConfig(chains, {
        env: {
          CHAINS:
            '{"8453":{"rpcUrl":"https://base.example/v2/path-key-0123456789","wsUrl":"wss://base.example/ws?apikey=query-key-987654"}}',
        },
        file: {},
      });
    } catch (err) {
      message = (err as Error).message;
    }
    expect(message).toContain('https://base.example/***');
    expect(message).toContain('wss://base.example/***');
    expect(message).not.toContain('path-key');
    expect(message).not.toContain('query-key');
  });

  it('behavior: a setting read from the environment only ignores a config file key of its name', () => {
    const s = {
      secretsDir: { ...settings.string('SECRETS_DIR', 'secrets folder', ''), envOnly: true },
      port: settings.int('PORT', 'listen port', 8080, [1, 65535]),
    };
    expect(loadConfig(s, { env: {}, file: { secretsDir: '/from/file', port: 81 } })).toEqual({
      secretsDir: '',
      port: 81,
    });
    expect(loadConfig(s, { env: { SECRETS_DIR: '/run/secrets/pmm' }, file: {} }).secretsDir).toBe('/run/secrets/pmm');
  });

  it('error: a missing required setting names it', () => {
    expect(() => loadConfig(spec, { env: {}, file: {} })).toThrow(
      new ConfigError('INTERNAL_TOKEN (token): required: shared token'),
    );
  });

  it('error: an invalid value names the setting and the value, but never a secret value', () => {
    expect(() => loadConfig(spec, { env: { PORT: 'eighty', INTERNAL_TOKEN: 'abcdefgh2' }, file: {} })).toThrow(
      'PORT (port): must be an integer in 1..65535, got "eighty"',
    );
    expect(() => loadConfig(spec, { env: { REDIS_URL: 'http://x', INTERNAL_TOKEN: 'abcdefgh3' }, file: {} })).toThrow(
      'REDIS_URL (redisUrl): must use redis or rediss',
    );
    const secretSpec = {
      key: settings.json('KEY', 'a secret json', undefined, () => {
        throw new ConfigError('bad');
      }),
    };
    try {
      loadConfig(
        {
          ...secretSpec,
          s: {
            ...settings.secret('S', 'secret'),
            parse: () => {
              throw new ConfigError('bad');
            },
          },
        },
        { env: { KEY: '1', S: 'supersecretvalue' }, file: {} },
      );
    } catch (err) {
      expect(String(err)).not.toContain('supersecretvalue');
    }
  });

  it('behavior: describeConfig lists env, default and description', () => {
    expect(describeConfig(spec)).toContain('PORT (port; default 8080): listen port');
    expect(describeConfig(spec)).toContain('INTERNAL_TOKEN (token; secret): shared token');
  });
});

describe('parseChainDeployments', () => {
  const addr = (n: number) => '0x' + n.toString(16).padStart(40, '0');
  it('default: checksums addresses and keeps only declared fields (a stack file carries more)', () => {
    const out = parseChainDeployments({
      '8453': {
        chainId: 8453,
        rpcUrl: 'http://127.0.0.1:8545',
        contracts: { router: addr(0xabc), helper: addr(2), verifier: addr(3) },
        apiSigner: { privateKey: 'x' },
      },
    });
    expect(out[8453]).toEqual({
      chainId: 8453,
      rpcUrl: 'http://127.0.0.1:8545',
      wsUrl: undefined,
      contracts: {
        router: '0x0000000000000000000000000000000000000aBc',
        helper: addr(2),
        verifier: addr(3),
        multicall3: '0xcA11bde05977b3631167028862bE2a173976CA11', // from the chain registry
      },
    });
  });
  it("security: a parsed node URL's path and query are redacted wherever they appear later (a library's error)", () => {
    const c = { router: addr(1), helper: addr(2), verifier: addr(3) };
    parseChainDeployments({
      '56': {
        chainId: 56,
        rpcUrl: 'https://bsc.example/v3/parsed-path-key-4242',
        wsUrl: 'wss://bsc.example/?token=parsed-query-key-4343',
        contracts: c,
      },
    });
    const line = redactText(
      'request timeout (url="https://bsc.example/v3/parsed-path-key-4242", ws wss://bsc.example/?token=parsed-query-key-4343)',
    );
    expect(line).not.toContain('parsed-path-key');
    expect(line).not.toContain('parsed-query-key');
    expect(line).toContain('https://bsc.example[redacted]');
  });

  it('behavior: maskUrl keeps the scheme and host only', () => {
    expect(maskUrl('https://user:pw@node.example:8443/v2/key?x=1')).toBe('https://***@node.example:8443/***');
    expect(maskUrl('http://127.0.0.1:8545')).toBe('http://127.0.0.1:8545');
    expect(maskUrl('wss://node.example/?apikey=k')).toBe('wss://node.example/***');
    expect(maskUrl('not a url key-123')).toBe('***');
  });

  it('error: unknown chain, mismatched key, bad address, bad URL', () => {
    const c = { router: addr(1), helper: addr(2), verifier: addr(3) };
    expect(() => parseChainDeployments({ '1': { chainId: 1, contracts: c } })).toThrow('chains.1: unknown chain');
    expect(() => parseChainDeployments({ '56': { chainId: 8453, contracts: c } })).toThrow('does not match its key');
    expect(() => parseChainDeployments({ '56': { chainId: 56, contracts: { ...c, router: '0x12' } } })).toThrow(
      'chains.56.contracts.router: not an address',
    );
    expect(() => parseChainDeployments({ '56': { chainId: 56, wsUrl: 'http://x', contracts: c } })).toThrow(
      'chains.56/wsUrl',
    );
  });
});

describe('settings without a default', () => {
  it('error: a string or url setting without a default is required', () => {
    const s = { a: settings.string('A_SETTING', 'needed') };
    expect(() => loadConfig(s, { env: {}, file: {} })).toThrow('A_SETTING (a): required: needed');
    const u = { b: settings.url('B_URL', 'needed too') };
    expect(() => loadConfig(u, { env: {}, file: {} })).toThrow('B_URL (b): required: needed too');
  });
});

describe('list settings', () => {
  const upper = (items: string[]) => {
    if (items.some((i) => i.includes(' '))) throw new ConfigError('no spaces inside an item');
    return items.map((i) => i.toUpperCase());
  };
  const spec = { names: settings.list('NAMES', 'some names', ['x'], upper), plain: settings.list('PLAIN', 'any', []) };

  it('behavior: comma-separated in the environment or an array in the file, trimmed, empty items dropped, checked', () => {
    expect(loadConfig(spec, { env: { NAMES: ' a, b ,,c ' }, file: {} }).names).toEqual(['A', 'B', 'C']);
    expect(loadConfig(spec, { env: {}, file: { names: ['d', ' e '] } }).names).toEqual(['D', 'E']);
    expect(loadConfig(spec, { env: {}, file: {} })).toEqual({ names: ['x'], plain: [] });
  });

  it('error: a refused item or a value that is no list names the setting', () => {
    expect(() => loadConfig(spec, { env: { NAMES: 'a,b c' }, file: {} })).toThrow('NAMES (names)');
    expect(() => loadConfig(spec, { env: { NAMES: 'a,b c' }, file: {} })).toThrow('no spaces inside an item');
    expect(() => loadConfig(spec, { env: {}, file: { plain: 7 } })).toThrow('must be a comma-separated list');
  });
});

describe('optional decimal settings (limits: off until given)', () => {
  const spec = {
    cap: settings.optionalDecimal('CAP', 'a cap'),
    floor: settings.optionalDecimal('FLOOR', 'a floor', { signed: true }),
    share: settings.optionalDecimal('SHARE', 'a share', { max: 10_000 }),
  };

  it('behavior: unset or empty is off (""); a decimal is kept as its exact text; a JSON number in the file as its text', () => {
    expect(loadConfig(spec, { env: {}, file: {} })).toEqual({ cap: '', floor: '', share: '' });
    expect(loadConfig(spec, { env: { CAP: ' 5000.25 ', FLOOR: '-12.5', SHARE: '' }, file: {} })).toEqual({
      cap: '5000.25',
      floor: '-12.5',
      share: '',
    });
    expect(loadConfig(spec, { env: {}, file: { cap: 1_000_000, floor: -20 } })).toMatchObject({
      cap: '1000000',
      floor: '-20',
    });
  });

  it('error: not a plain decimal, negative where unsigned, above its maximum, or too many decimals names the setting', () => {
    expect(() => loadConfig(spec, { env: { CAP: '5k' }, file: {} })).toThrow('CAP (cap): must be a decimal number');
    expect(() => loadConfig(spec, { env: { CAP: '1e6' }, file: {} })).toThrow('CAP (cap)');
    expect(() => loadConfig(spec, { env: { CAP: '-1' }, file: {} })).toThrow('CAP (cap)');
    expect(() => loadConfig(spec, { env: { SHARE: '10001' }, file: {} })).toThrow(
      'SHARE (share): must be at most 10000',
    );
    expect(() => loadConfig(spec, { env: { FLOOR: `0.${'1'.repeat(19)}` }, file: {} })).toThrow('FLOOR (floor)');
    expect(() => loadConfig(spec, { env: {}, file: { cap: true } })).toThrow('CAP (cap)');
  });
});

describe('parseChainDeployments defaults from the chain registry', () => {
  const addr = (n: number) => '0x' + n.toString(16).padStart(40, '0');
  it('behavior: a left-out Multicall3 is the canonical one where the registry knows it, absent elsewhere', () => {
    const contracts = { router: addr(1), helper: addr(2), verifier: addr(3) };
    const out = parseChainDeployments({ '8453': { chainId: 8453, contracts }, '4663': { chainId: 4663, contracts } });
    expect(out[8453]!.contracts.multicall3).toBe('0xcA11bde05977b3631167028862bE2a173976CA11');
    expect(out[4663]!.contracts.multicall3).toBeUndefined();
  });
  it('behavior: pinned token decimals are kept by checksummed address; out of range or malformed is refused', () => {
    const contracts = { router: addr(1), helper: addr(2), verifier: addr(3) };
    const out = parseChainDeployments({
      '8453': { chainId: 8453, contracts, pinnedDecimals: { [addr(0xabc).toLowerCase()]: 18 } },
    });
    expect(out[8453]!.pinnedDecimals).toEqual({ '0x0000000000000000000000000000000000000aBc': 18 });
    expect(parseChainDeployments({ '8453': { chainId: 8453, contracts } })[8453]!.pinnedDecimals).toBeUndefined();
    for (const pinnedDecimals of [{ [addr(4)]: 37 }, { [addr(4)]: 6.5 }, { [addr(4)]: '6' }])
      expect(() => parseChainDeployments({ '8453': { chainId: 8453, contracts, pinnedDecimals } })).toThrow(
        'chains.8453/pinnedDecimals',
      );
    expect(() =>
      parseChainDeployments({ '8453': { chainId: 8453, contracts, pinnedDecimals: { '0x12': 6 } } }),
    ).toThrow('chains.8453.pinnedDecimals: not an address');
    // The devnet's stack file (read as a chains file) has a `tokens` map of its own: not pins, not an error.
    const tokens = { USDC: { address: addr(5), symbol: 'USDC', decimals: 6 } };
    expect(parseChainDeployments({ '8453': { chainId: 8453, contracts, tokens } })[8453]).not.toHaveProperty(
      'pinnedDecimals',
    );
  });
  it("behavior: each pair's reference (its feed and its own band values) is kept by checksummed base address", () => {
    const contracts = { router: addr(1), helper: addr(2), verifier: addr(3) };
    const references = {
      [addr(0xabc).toLowerCase()]: { feed: addr(0xdef).toLowerCase(), maxAgeSeconds: 90, mode: 'watch' },
      [addr(0xbcd)]: { feed: addr(0xcde) },
    };
    expect(parseChainDeployments({ '8453': { chainId: 8453, contracts, references } })[8453]!.references).toEqual({
      '0x0000000000000000000000000000000000000aBc': {
        feed: '0x0000000000000000000000000000000000000deF',
        band: { maxAgeSeconds: 90, mode: 'watch' },
      },
      '0x0000000000000000000000000000000000000bcd': { feed: '0x0000000000000000000000000000000000000CDE', band: {} },
    });
    expect(parseChainDeployments({ '8453': { chainId: 8453, contracts } })[8453]).not.toHaveProperty('references');
  });
  it('error: a reference without a feed, with a band value out of bounds, an unknown mode or field is refused', () => {
    const contracts = { router: addr(1), helper: addr(2), verifier: addr(3) };
    for (const reference of [
      {},
      { feed: addr(4), maxDeviationBelowBps: 0 },
      { feed: addr(4), maxDeviationAboveBps: 10_001 },
      { feed: addr(4), recoveryBlocks: 1.5 },
      { feed: addr(4), mode: 'off' },
      { feed: addr(4), heartbeat: 60 },
    ])
      expect(() =>
        parseChainDeployments({ '8453': { chainId: 8453, contracts, references: { [addr(5)]: reference } } }),
      ).toThrow('chains.8453/references');
    expect(() =>
      parseChainDeployments({ '8453': { chainId: 8453, contracts, references: { [addr(5)]: { feed: '0x12' } } } }),
    ).toThrow('.feed: not an address');
  });
  it('error: a router the registry does not know must be configured', () => {
    expect(() =>
      parseChainDeployments({ '56': { chainId: 56, contracts: { helper: addr(2), verifier: addr(3) } } }),
    ).toThrow('chains.56.contracts.router: required (the chain registry has no default)');
  });
});

describe('loadConfig: every problem at once, SECRETS_DIR', () => {
  const two = {
    token: settings.secret('INTERNAL_TOKEN', 'shared token'),
    key: settings.secret('SIGNER_KEY_8453', 'signing key'),
    port: settings.int('PORT', 'listen port', 8080, [1, 65535]),
  };

  it('error: names each missing secret in one message', () => {
    let err: ConfigError | undefined;
    try {
      loadConfig(two, { env: { PORT: 'x' }, file: {} });
    } catch (e) {
      err = e as ConfigError;
    }
    expect(err?.problems).toEqual([
      'INTERNAL_TOKEN (token): required: shared token',
      'SIGNER_KEY_8453 (key): required: signing key',
      'PORT (port): must be an integer in 1..65535, got "x"',
    ]);
    expect(err?.message).toMatch(/^3 problems:\n {2}INTERNAL_TOKEN .*\n {2}SIGNER_KEY_8453 .*\n {2}PORT /);
  });

  it('error: an unreadable CONFIG_FILE is reported together with each missing secret', () => {
    let err: ConfigError | undefined;
    try {
      loadConfig(two, { env: { CONFIG_FILE: '/nonexistent/chains.json' } });
    } catch (e) {
      err = e as ConfigError;
    }
    expect(err?.problems).toEqual([
      'CONFIG_FILE: cannot read /nonexistent/chains.json',
      'INTERNAL_TOKEN (token): required: shared token',
      'SIGNER_KEY_8453 (key): required: signing key',
    ]);
  });

  it('behavior: a secret set neither as X nor X_FILE comes from SECRETS_DIR/<x>, and X wins over it', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'secrets-dir-'));
    writeFileSync(path.join(dir, 'internal_token'), 'token-from-secrets-dir\n');
    writeFileSync(path.join(dir, 'signer_key_8453'), 'key-from-secrets-dir\n');
    const cfg = loadConfig(two, { env: { SECRETS_DIR: dir, SIGNER_KEY_8453: 'key-from-env-1' }, file: {} });
    expect(cfg).toEqual({ token: 'token-from-secrets-dir', key: 'key-from-env-1', port: 8080 });
    expect(redactText('x token-from-secrets-dir')).toBe('x [redacted]');
  });

  it("behavior: secretFileReader reads a secret's file again (X_FILE, else SECRETS_DIR/<x>), registered for redaction; none when X itself is set", async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'secret-reread-'));
    const file = path.join(dir, 'pin');
    writeFileSync(file, 'pin-one-271828\n');
    const fromFile = secretFileReader('SIGNER_PKCS11_PIN_8453', { SIGNER_PKCS11_PIN_8453_FILE: file })!;
    expect(await fromFile()).toBe('pin-one-271828');
    writeFileSync(file, 'pin-two-314159\n');
    expect(await fromFile()).toBe('pin-two-314159');
    expect(redactText('x pin-two-314159')).toBe('x [redacted]');
    writeFileSync(path.join(dir, 'quoter_pkcs11_pin'), 'pin-three-161803\n');
    expect(await secretFileReader('QUOTER_PKCS11_PIN', { SECRETS_DIR: dir })!()).toBe('pin-three-161803');
    expect(secretFileReader('QUOTER_PKCS11_PIN', { QUOTER_PKCS11_PIN: 'in-the-variable', SECRETS_DIR: dir })).toBe(
      undefined,
    );
    expect(await secretFileReader('X', { X_FILE: path.join(dir, 'missing') })!()).toBe(undefined);
  });

  it('behavior: CONFIG_WAIT_SECONDS waits for CONFIG_FILE to appear', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'config-wait-'));
    const file = path.join(dir, 'chains.json');
    const env = {
      CONFIG_FILE: file,
      CONFIG_WAIT_SECONDS: '5',
      INTERNAL_TOKEN: 't-0123456789',
      SIGNER_KEY_8453: 'k-0123456789',
    };
    // A child process writes the file a moment later (this process blocks while it waits).
    spawn(
      process.execPath,
      ['-e', `setTimeout(() => require('fs').writeFileSync(${JSON.stringify(file)}, '{"port": 7001}'), 400)`],
      { stdio: 'ignore' },
    );
    const started = Date.now();
    expect(loadConfig(two, { env }).port).toBe(7001);
    expect(Date.now() - started).toBeGreaterThanOrEqual(200);
    expect(() =>
      loadConfig(two, { env: { ...env, CONFIG_FILE: `${file}.missing`, CONFIG_WAIT_SECONDS: '0' } }),
    ).toThrow(/CONFIG_FILE: cannot read/);
  });

  it('behavior: a process waits for a missing CONFIG_FILE once, not once per settings layer', () => {
    const env = { CONFIG_FILE: '/nonexistent/wait-once.json', CONFIG_WAIT_SECONDS: '2' };
    let started = Date.now();
    expect(() => loadConfig(two, { env })).toThrow(/CONFIG_FILE: cannot read/);
    expect(Date.now() - started).toBeGreaterThanOrEqual(1_900);
    // A second wait would take the whole 2 s again; the bound leaves room for a loaded machine
    // (516 ms was seen for no wait at all while the full suite ran on two cores).
    started = Date.now();
    expect(() => loadConfig(two, { env })).toThrow(/CONFIG_FILE: cannot read/);
    expect(Date.now() - started).toBeLessThan(1_500);
  });
});
