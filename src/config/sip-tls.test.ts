import t from 'tap';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { rootCertificates } from 'node:tls';
import { readSipTls } from './sip-tls.js';
import { needAvailable } from '../../test/support/peers.js';

/** Two self-signed certificates with their keys, made with the openssl CLI; undefined without it. */
function material(): { dir: string; cert: string; key: string; otherKey: string } | undefined {
  const dir = mkdtempSync(join(tmpdir(), 'vgw-sip-tls-'));
  try {
    for (const name of ['a', 'b']) {
      execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '1', '-subj', `/CN=${name}.example.test`,
        '-keyout', join(dir, `${name}-key.pem`), '-out', join(dir, `${name}-cert.pem`)], { stdio: 'ignore' });
    }
    return { dir, cert: join(dir, 'a-cert.pem'), key: join(dir, 'a-key.pem'), otherKey: join(dir, 'b-key.pem') };
  } catch {
    rmSync(dir, { recursive: true, force: true });
    return undefined;
  }
}

const files = material();

t.test('RFC 3261 26.2: sip.tls is read and checked at start, naming the key that is wrong', (t) => {
  if (!needAvailable(t, files, 'needs certificates made by openssl (apt-get install openssl)')) return;
  const { dir, cert, key, otherKey } = files!;
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const ok = readSipTls({ cert_file: cert, key_file: key });
  t.ok(ok.cert.length > 0 && ok.key.length > 0, 'a certificate and its key');
  t.equal(ok.ca, undefined, 'outbound connections trust the system roots unless told otherwise');
  t.throws(() => readSipTls({ cert_file: join(dir, 'missing.pem'), key_file: key }), { name: 'ConfigError', message: /sip\.tls\.cert_file .*missing\.pem cannot be read/ });
  t.throws(() => readSipTls({ cert_file: cert, key_file: join(dir, 'nope.pem') }), { name: 'ConfigError', message: /sip\.tls\.key_file/ });
  t.throws(() => readSipTls({ cert_file: cert, key_file: otherKey }), { name: 'ConfigError', message: /do not make a usable pair/ });
  writeFileSync(join(dir, 'garbage.pem'), 'not a certificate');
  t.throws(() => readSipTls({ cert_file: join(dir, 'garbage.pem'), key_file: key }), { name: 'ConfigError' });
  const withCa = readSipTls({ cert_file: cert, key_file: key, ca_file: join(dir, 'b-cert.pem') });
  t.equal(withCa.ca?.length, rootCertificates.length + 1, 'a private CA is added to the system roots, not put in their place');
  t.end();
});
