/**
 * @module A local HTTPS server on 127.0.0.1 with a throwaway certificate authority generated at
 * test time by the openssl CLI. The server certificate names `recordings.test`,
 * `*.recordings.test` and 127.0.0.1, so clients pinned to 127.0.0.1 still check real names.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Test } from 'tap';

/** The domain the fixture certificate is issued for. */
export const FIXTURE_DOMAIN = 'recordings.test';

export interface TestPki {
  /** PEM of the test CA: pass it as `ca` to trust the fixture. */
  ca: string;
  key: string;
  cert: string;
}

export interface HttpsFixture {
  port: number;
  ca: string;
  /** `https://<host>:<port><path>`; host defaults to `media.recordings.test`. */
  url(path: string, host?: string): string;
  /** Every request the server saw, as `host path`. */
  requests: string[];
}

let pki: TestPki | undefined;

function openssl(cwd: string, ...args: string[]): void {
  execFileSync('openssl', args, { cwd, stdio: 'pipe' });
}

/** A CA and a server certificate signed by it, generated once per process (EC P-256: fast). */
export function testPki(): TestPki {
  if (pki) return pki;
  const dir = mkdtempSync(join(tmpdir(), 'vgw-pki-'));
  try {
    const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
    openssl(dir, 'req', '-x509', ...ec, '-keyout', 'ca.key', '-out', 'ca.crt', '-days', '2', '-subj', '/CN=Voice Gateway Test CA',
      '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign');
    openssl(dir, 'req', ...ec, '-keyout', 'server.key', '-out', 'server.csr', '-subj', `/CN=${FIXTURE_DOMAIN}`);
    writeFileSync(join(dir, 'ext.cnf'), [
      `subjectAltName=DNS:${FIXTURE_DOMAIN},DNS:*.${FIXTURE_DOMAIN},IP:127.0.0.1`,
      'basicConstraints=CA:FALSE',
      'extendedKeyUsage=serverAuth',
    ].join('\n'));
    openssl(dir, 'x509', '-req', '-in', 'server.csr', '-CA', 'ca.crt', '-CAkey', 'ca.key', '-set_serial', '0x5eed',
      '-days', '2', '-extfile', 'ext.cnf', '-out', 'server.crt');
    pki = {
      ca: readFileSync(join(dir, 'ca.crt'), 'utf8'),
      key: readFileSync(join(dir, 'server.key'), 'utf8'),
      cert: readFileSync(join(dir, 'server.crt'), 'utf8'),
    };
    return pki;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Starts the server on 127.0.0.1 (or `listenHost`) port 0; it and every open connection are closed at teardown. */
export async function startHttpsFixture(
  t: Test,
  handler: (req: IncomingMessage, res: ServerResponse) => void,
  listenHost = '127.0.0.1',
): Promise<HttpsFixture> {
  const { ca, key, cert } = testPki();
  const requests: string[] = [];
  const server: Server = createServer({ key, cert }, (req, res) => {
    requests.push(`${req.headers.host ?? ''} ${req.url ?? ''}`);
    handler(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, listenHost, resolve));
  t.teardown(() => new Promise<void>((resolve) => {
    server.closeAllConnections();
    server.close(() => resolve());
  }));
  const { port } = server.address() as AddressInfo;
  return { port, ca, requests, url: (path, host = `media.${FIXTURE_DOMAIN}`) => `https://${host}:${port}${path}` };
}
