import t from 'tap';
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SipHeaders, SipRequest } from '../messages/sip-message.js';
import { TransportLayer } from './transport-layer.js';
import { needAvailable } from '../../../../test/support/peers.js';

interface Pem {
  cert: Buffer;
  key: Buffer;
}

/** Self-signed certificates for the gateway (server and client use) and for the far end, or null without openssl. */
function certificates(dir: string): { gateway: Pem; peer: Pem } | null {
  const make = (name: string, usage: string): Pem => {
    execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '1',
      '-subj', `/CN=${name}`, '-addext', `subjectAltName=DNS:${name}`, '-addext', `extendedKeyUsage=${usage}`,
      '-keyout', join(dir, `${name}.key`), '-out', join(dir, `${name}.crt`)], { stdio: 'ignore' });
    return { cert: readFileSync(join(dir, `${name}.crt`)), key: readFileSync(join(dir, `${name}.key`)) };
  };
  try {
    return { gateway: make('gw.example.test', 'serverAuth,clientAuth'), peer: make('peer.example.test', 'serverAuth') };
  } catch {
    return null;
  }
}

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

async function listening(port: number): Promise<void> {
  for (let i = 0; i < 100; i++) {
    const up = await new Promise<boolean>((resolve) => {
      const socket = connect(port, '127.0.0.1', () => (socket.destroy(), resolve(true))).on('error', () => resolve(false));
    });
    if (up) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`openssl s_server did not listen on ${port}`);
}

const dir = mkdtempSync(join(tmpdir(), 'vgw-mtls-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));
const pems = certificates(dir);

t.test('RFC 5630 / RFC 5922: a far end that requires mutual TLS gets our certificate and takes the request', async (t) => {
  if (!needAvailable(t, pems, 'needs certificates made by openssl (apt-get install openssl)')) return;
  // The far end is openssl's own TLS server: it demands a client certificate (-Verify), trusts only
  // the gateway's, fails the handshake without one (-verify_return_error), and prints what it reads.
  const port = await freePort();
  const server = spawn('openssl', ['s_server', '-accept', `127.0.0.1:${port}`, '-quiet',
    '-cert', join(dir, 'peer.example.test.crt'), '-key', join(dir, 'peer.example.test.key'),
    '-Verify', '1', '-verify_return_error', '-CAfile', join(dir, 'gw.example.test.crt')]);
  t.teardown(() => server.kill());
  let received = '';
  server.stdout.on('data', (chunk: Buffer) => (received += chunk.toString()));
  await listening(port);

  const gateway = new TransportLayer({
    listen: [{ protocol: 'TLS', host: '127.0.0.1', port: 0, tls: { ...pems!.gateway, ca: pems!.peer.cert } }],
    delegate: { onMessage: () => undefined },
  });
  await gateway.start();
  t.teardown(() => gateway.stop());
  const h = new SipHeaders().append('Via', 'SIP/2.0/TLS gw.example.test;branch=z9hG4bKmtls').append('From', '<sips:gw@gw.example.test>;tag=1')
    .append('To', '<sips:trunk@peer.example.test>').append('Call-ID', 'mtls-1').append('CSeq', '1 OPTIONS').append('Max-Forwards', '70');
  await gateway.send(new SipRequest('OPTIONS', 'sips:trunk@peer.example.test', h), { protocol: 'TLS', address: '127.0.0.1', port, hostname: 'peer.example.test' });
  const deadline = Date.now() + 5000;
  while (!received.includes('Call-ID: mtls-1') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  t.match(received, /^OPTIONS sips:trunk@peer\.example\.test SIP\/2\.0\r\n/, 'the far end read the request after checking our certificate');
  t.match(received, /Call-ID: mtls-1/);
});
