import t from 'tap';
import { randomBytes } from 'node:crypto';
import { SecretBox, SecretDecryptionError } from './secret-box.js';

t.test('AES-256-GCM: a sealed secret opens with the same key and context only', (t) => {
  const box = new SecretBox(randomBytes(32));
  const sealed = box.seal('sk_live_provider_key_1234', 'agt_1/api_key');
  t.notMatch(sealed, /sk_live/, 'the plaintext does not appear in the sealed form');
  t.equal(box.open(sealed, 'agt_1/api_key'), 'sk_live_provider_key_1234');
  t.not(box.seal('same', 'c'), box.seal('same', 'c'), 'a fresh IV every time');
  t.throws(() => box.open(sealed, 'agt_2/api_key'), SecretDecryptionError, 'context is bound');
  t.throws(() => new SecretBox(randomBytes(32)).open(sealed, 'agt_1/api_key'), SecretDecryptionError, 'another key');
  const parts = sealed.split('.');
  const body = Buffer.from(parts[3]!, 'base64url');
  body[0]! ^= 1;
  parts[3] = body.toString('base64url');
  t.throws(() => box.open(parts.join('.'), 'agt_1/api_key'), SecretDecryptionError, 'tampering is detected');
  t.throws(() => box.open('plain', 'x'), SecretDecryptionError);
  t.throws(() => new SecretBox(Buffer.alloc(16)), RangeError);
  t.end();
});
