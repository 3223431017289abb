/**
 * The quoter key's one definition (quoter-key.ts): the same settings and rules under the
 * indexer's names (QUOTER_KEY…) and the signer's of one chain (QUOTER_KEY_<id>…), and an
 * in-memory key that is not a key refused without echoing it. The module path is proven with
 * SoftHSM2 by the indexer's and the signer's pkcs11-quoter devnet tests.
 */
import { ConfigError, loadConfig, openQuoterKey, parsePkcs11Uri, quoterKeySettings, quoterKeySource } from '../../src';

const URI = 'pkcs11:token=t;object=quoter?module-path=/opt/pkcs11/module.so';
const KEY = `0x${'11'.repeat(32)}`;

describe('quoter key settings', () => {
  it('behavior: the indexer reads QUOTER_KEY…, a signer chain QUOTER_KEY_<id>…, with the same rules', () => {
    const indexer = quoterKeySettings(undefined, 'the key');
    const chain = quoterKeySettings(56, 'the key');
    expect([indexer.quoterKey.env, indexer.quoterPkcs11.env, indexer.quoterPkcs11Pin.env]).toEqual([
      'QUOTER_KEY',
      'QUOTER_PKCS11',
      'QUOTER_PKCS11_PIN',
    ]);
    expect([chain.quoterKey.env, chain.quoterPkcs11.env, chain.quoterPkcs11Pin.env]).toEqual([
      'QUOTER_KEY_56',
      'QUOTER_PKCS11_56',
      'QUOTER_PKCS11_PIN_56',
    ]);
    expect(chain.quoterKey.secret && chain.quoterPkcs11Pin.secret).toBe(true);
    const values = loadConfig(chain, { env: { QUOTER_PKCS11_56: URI, QUOTER_PKCS11_PIN_56: '1234' }, file: {} });
    expect(quoterKeySource(values, { chainId: 56, required: false, signTimeoutMs: 750, env: {} })).toEqual({
      kind: 'pkcs11',
      key: parsePkcs11Uri(URI),
      pin: '1234',
      signTimeoutMs: 750,
    });
  });

  it('behavior: none is undefined where optional (a signer chain), an error naming every way where required', () => {
    const none = { quoterKey: undefined, quoterPkcs11: undefined, quoterPkcs11Pin: undefined };
    expect(quoterKeySource(none, { chainId: 56, required: false, signTimeoutMs: 1 })).toBeUndefined();
    expect(() => quoterKeySource(none, { required: true, signTimeoutMs: 1 })).toThrow(
      'QUOTER_KEY (quoterKey): required (or QUOTER_KEY_FILE; or the key in a module: QUOTER_PKCS11 with QUOTER_PKCS11_PIN_FILE)',
    );
    expect(quoterKeySource({ ...none, quoterKey: KEY }, { required: true, signTimeoutMs: 1 })).toEqual({
      kind: 'hex',
      privateKey: KEY,
    });
  });

  it('error: two keys, or a module key without its PIN, name the chain settings', () => {
    const key = parsePkcs11Uri(URI);
    expect(() =>
      quoterKeySource(
        { quoterKey: KEY, quoterPkcs11: key, quoterPkcs11Pin: '1234' },
        { chainId: 4663, required: false, signTimeoutMs: 1 },
      ),
    ).toThrow('QUOTER_PKCS11_4663 (quoterPkcs11_4663): QUOTER_KEY_4663 is set too; give one quoter key');
    expect(() =>
      quoterKeySource(
        { quoterKey: undefined, quoterPkcs11: key, quoterPkcs11Pin: undefined },
        { chainId: 4663, required: false, signTimeoutMs: 1 },
      ),
    ).toThrow("QUOTER_PKCS11_4663 (quoterPkcs11_4663): the token's PIN is needed: set QUOTER_PKCS11_PIN_4663_FILE");
  });

  it('error: an in-memory key that is no secp256k1 key is a ConfigError naming the setting, never the text', async () => {
    const bad = `0x${'ff'.repeat(32)}`; // above the curve order
    const err = await openQuoterKey({ kind: 'hex', privateKey: bad }, { chainId: 8453 }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as Error).message).toBe('QUOTER_KEY_8453 (quoterKey_8453): not a valid secp256k1 private key');
    const key = await openQuoterKey({ kind: 'hex', privateKey: KEY });
    expect(key.address).toMatch(/^0x[0-9a-fA-F]{40}$/);
  });
});
