import t from 'tap';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SipHeaders, SipRequest } from '../messages/sip-message.js';
import { TransportLayer } from '../transport/transport-layer.js';
import type { TlsOptions } from '../transport/stream-transport.js';
import { ServerLocator, type DnsLookup } from './server-locator.js';
import { needAvailable } from '../../../../test/support/peers.js';

/** A certificate for the name `sip.example.test` only (no IP SAN), so the check can only pass through SNI/hostname. */
function certificateFor(name: string): TlsOptions | undefined {
  const dir = mkdtempSync(join(tmpdir(), 'vgw-sips-'));
  try {
    execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '1', '-subj', `/CN=${name}`,
      '-addext', `subjectAltName=DNS:${name}`, '-keyout', join(dir, 'key.pem'), '-out', join(dir, 'cert.pem')], { stdio: 'ignore' });
    const cert = readFileSync(join(dir, 'cert.pem'));
    return { cert, key: readFileSync(join(dir, 'key.pem')), ca: cert };
  } catch {
    return undefined;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const tls = certificateFor('sip.example.test');

t.test('RFC 3263 + RFC 5922: a sips: URI resolves to TLS and the certificate is checked against the URI domain', async (t) => {
  if (!needAvailable(t, tls, 'needs certificates made by openssl (apt-get install openssl)')) return;
  const received: string[] = [];
  const server = new TransportLayer({ listen: [{ protocol: 'TLS', host: '127.0.0.1', port: 0, tls: tls! }], delegate: { onMessage: (m) => received.push(m.callId) } });
  const client = new TransportLayer({ listen: [{ protocol: 'TLS', host: '127.0.0.1', port: 0, tls: tls! }], delegate: { onMessage: () => undefined } });
  await server.start();
  await client.start();
  t.teardown(async () => { await client.stop(); await server.stop(); });
  const port = server.listeningPoint('TLS')!.port;
  const dns: DnsLookup = {
    resolveNaptr: () => Promise.resolve([{ flags: 's', service: 'SIPS+D2T', regexp: '', replacement: '_sips._tcp.example.test', order: 10, preference: 10 }]),
    resolveSrv: (name) => Promise.resolve(name === '_sips._tcp.example.test' ? [{ priority: 0, weight: 0, port, name: 'sip.example.test' }] : []),
    resolve4: (name) => Promise.resolve(name === 'sip.example.test' ? ['127.0.0.1'] : []),
    resolve6: () => Promise.resolve([]),
  };
  const [target] = await new ServerLocator({ dns }).locate('sips:bob@example.test');
  t.same(target, { protocol: 'TLS', address: '127.0.0.1', port, hostname: 'example.test' });
  const h = new SipHeaders().append('Via', 'SIP/2.0/TLS client.example.test;branch=z9hG4bKsips').append('From', '<sips:a@example.test>;tag=1')
    .append('To', '<sips:bob@example.test>').append('Call-ID', 'sips-1').append('CSeq', '1 OPTIONS').append('Max-Forwards', '70');
  // The certificate names only the SRV target. RFC 5922 4 requires the URI domain (example.test)
  // in the server's certificate, so the resolved target fails verification; naming the
  // certificate's host explicitly shows that the TLS path itself works.
  await t.rejects(client.send(new SipRequest('OPTIONS', 'sips:bob@example.test', h), target!), { name: 'TransportError' });
  await client.send(new SipRequest('OPTIONS', 'sips:bob@example.test', h), { ...target!, hostname: 'sip.example.test' });
  while (received.length === 0) await new Promise((r) => setTimeout(r, 5));
  t.same(received, ['sips-1']);
});
