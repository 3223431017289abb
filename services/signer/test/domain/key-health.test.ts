/**
 * What the signer shows of a key in a module (domain/key-health.ts): a refused PIN sets
 * signer_key_pin_refused (the SigningKeyPinRefused alert's series) and logs once what to do;
 * recovery clears it. Real metrics registry and logger, no module needed.
 */
import { PassThrough } from 'node:stream';
import { createLogger, createMetrics } from '@pmm/core';
import { keyHealth } from '../../src/domain/key-health';

it('behavior: a refused PIN: key down, signer_key_pin_refused 1, one log line saying how a new PIN arrives; recovered: 1 and 0 again', async () => {
  const metrics = createMetrics('signer', { defaultMetrics: false });
  const stream = new PassThrough();
  let output = '';
  stream.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const health = keyHealth(metrics, createLogger({ service: 'signer', stream }), [8453, 56]);
  const text = () => metrics.registry.metrics();
  expect(await text()).toMatch(/signer_key_pin_refused\{chain="8453",service="signer"\} 0/);

  health.failed(8453, 'the token refused the PIN (CKR_PIN_INCORRECT)');
  health.pinRefused(8453, 'the token refused the PIN (CKR_PIN_INCORRECT)');
  expect(await text()).toMatch(/signer_key_pin_refused\{chain="8453",service="signer"\} 1/);
  expect(await text()).toMatch(/signer_key_up\{chain="8453",service="signer"\} 0/);
  expect(await text()).toMatch(/signer_key_pin_refused\{chain="56",service="signer"\} 0/);
  await new Promise((r) => setImmediate(r));
  expect(output).toMatch(
    /"message":"the token refused the signing key's PIN: no further login is tried.*write the new PIN to the PIN file, or restart"/,
  );

  health.recovered(8453);
  expect(await text()).toMatch(/signer_key_pin_refused\{chain="8453",service="signer"\} 0/);
  expect(await text()).toMatch(/signer_key_up\{chain="8453",service="signer"\} 1/);
});
