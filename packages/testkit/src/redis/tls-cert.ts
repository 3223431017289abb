/**
 * A throw-away self-signed TLS certificate for 127.0.0.1 and localhost (EC P-256, one day), made
 * with the openssl program (Node's crypto can make keys but not certificates): for redis-server's
 * TLS port in tests. The certificate is also its own CA: clients trust it as `ca`, or through
 * NODE_EXTRA_CA_CERTS in a child process.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

export interface TlsCert {
  certFile: string;
  keyFile: string;
}

export function selfSignedCert(): TlsCert {
  const dir = mkdtempSync(path.join(tmpdir(), 'tls-cert-'));
  const certFile = path.join(dir, 'cert.pem');
  const keyFile = path.join(dir, 'key.pem');
  const r = spawnSync(
    'openssl',
    [
      ...['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'],
      ...['-keyout', keyFile, '-out', certFile, '-days', '1', '-subj', '/CN=localhost'],
      ...['-addext', 'subjectAltName=IP:127.0.0.1,DNS:localhost'],
    ],
    { encoding: 'utf8' },
  );
  if (r.error) throw new Error(`openssl could not run (apt-get install openssl): ${r.error.message}`);
  if (r.status !== 0) throw new Error(`openssl failed: ${r.stderr}`);
  return { certFile, keyFile };
}

/** redis-server arguments that serve TLS only, on `port`, with this certificate (clients need none). */
export function redisTlsArgs(cert: TlsCert, port: number): string[] {
  return [
    ...['--port', '0', '--tls-port', String(port)],
    ...['--tls-cert-file', cert.certFile, '--tls-key-file', cert.keyFile, '--tls-ca-cert-file', cert.certFile],
    ...['--tls-auth-clients', 'no'],
  ];
}
