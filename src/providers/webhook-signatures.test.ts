import t from 'tap';
import { createHmac } from 'node:crypto';
import { verifyElevenLabsSignature } from './elevenlabs/webhook-signature.js';
import { verifyRetellSignature } from './retell/webhook-signature.js';
import { verifyVapiSignature } from './vapi/webhook-signature.js';

const SECRET = 'wsec_4f1b2c3d';
const BODY = Buffer.from('{"type":"post_call_transcription","data":{"conversation_id":"c1","note":"caf\u00e9"}}', 'utf8');
const NOW = Date.UTC(2026, 0, 1, 12);
const hex = (key: string, msg: string | Buffer): string => createHmac('sha256', key).update(msg).digest('hex');

t.test('docs/WEBHOOKS.md "Post-call webhooks": ElevenLabs-Signature t=<s>,v0=hex(HMAC-SHA256("t.body")): right, wrong, stale, missing', (t) => {
  const ts = String(NOW / 1000 - 60);
  const sig = hex(SECRET, Buffer.concat([Buffer.from(`${ts}.`), BODY]));
  t.equal(verifyElevenLabsSignature(BODY, `t=${ts},v0=${sig}`, SECRET, NOW), 'valid');
  t.equal(verifyElevenLabsSignature(BODY.toString('utf8'), `t=${ts},v0=${sig}`, SECRET, NOW), 'valid', 'string body, same bytes');
  t.equal(verifyElevenLabsSignature(BODY, `t=${ts}, v0=${sig.toUpperCase()}`, SECRET, NOW), 'valid', 'spaces and hex case tolerated');
  t.equal(verifyElevenLabsSignature(BODY, `t=${ts},v0=${sig}`, 'other-secret', NOW), 'invalid', 'wrong secret');
  t.equal(verifyElevenLabsSignature(Buffer.concat([BODY, Buffer.from(' ')]), `t=${ts},v0=${sig}`, SECRET, NOW), 'invalid', 'body changed');
  t.equal(verifyElevenLabsSignature(BODY, `t=${Number(ts) + 1},v0=${sig}`, SECRET, NOW), 'invalid', 'timestamp changed');
  t.equal(verifyElevenLabsSignature(BODY, `t=${ts},v0=${sig.slice(0, 40)}`, SECRET, NOW), 'invalid', 'truncated MAC');
  t.equal(verifyElevenLabsSignature(BODY, `t=${ts},v0=zz${sig.slice(2)}`, SECRET, NOW), 'invalid', 'non-hex MAC');
  const old = String(NOW / 1000 - 31 * 60);
  t.equal(verifyElevenLabsSignature(BODY, `t=${old},v0=${hex(SECRET, `${old}.${BODY.toString()}`)}`, SECRET, NOW), 'stale', '31 minutes old');
  const edge = String(NOW / 1000 - 29 * 60);
  t.equal(verifyElevenLabsSignature(BODY, `t=${edge},v0=${hex(SECRET, `${edge}.${BODY.toString()}`)}`, SECRET, NOW), 'valid', '29 minutes old');
  const future = String(NOW / 1000 + 31 * 60);
  t.equal(verifyElevenLabsSignature(BODY, `t=${future},v0=${hex(SECRET, `${future}.${BODY.toString()}`)}`, SECRET, NOW), 'stale', 'far future');
  for (const header of [undefined, '', 'garbage', `v0=${sig}`, `t=${ts}`, `t=abc,v0=${sig}`, `t=${ts},v1=${sig}`, 'x'.repeat(2000)]) {
    t.equal(verifyElevenLabsSignature(BODY, header, SECRET, NOW), 'missing', `header ${String(header).slice(0, 20)}`);
  }
  t.end();
});

t.test('docs/WEBHOOKS.md "Post-call webhooks": x-retell-signature v=<ms>,d=hex(HMAC-SHA256(body + ms)): right, wrong, stale, missing', (t) => {
  const v = String(NOW - 30_000);
  const d = hex(SECRET, Buffer.concat([BODY, Buffer.from(v)]));
  t.equal(verifyRetellSignature(BODY, `v=${v},d=${d}`, SECRET, NOW), 'valid');
  t.equal(verifyRetellSignature(BODY, `v=${v},d=${hex(SECRET, `${v}${BODY.toString()}`)}`, SECRET, NOW), 'invalid', 'timestamp first is not the Retell order');
  t.equal(verifyRetellSignature(BODY, `v=${v},d=${d}`, 'nope', NOW), 'invalid');
  const old = String(NOW - 5 * 60_000 - 1);
  t.equal(verifyRetellSignature(BODY, `v=${old},d=${hex(SECRET, BODY.toString() + old)}`, SECRET, NOW), 'stale');
  const ahead = String(NOW + 5 * 60_000 + 1);
  t.equal(verifyRetellSignature(BODY, `v=${ahead},d=${hex(SECRET, BODY.toString() + ahead)}`, SECRET, NOW), 'stale', '|now - v| is checked both ways');
  for (const header of [undefined, '', `d=${d}`, `v=${v}`, `v=${v},d=`, `v=-1,d=${d}`]) {
    t.equal(verifyRetellSignature(BODY, header, SECRET, NOW), 'missing', String(header));
  }
  t.end();
});

t.test('Vapi HMAC credential: default {timestamp}.{body} hex, prefix, base64, body-only, stale', (t) => {
  const ts = String(NOW);
  const sig = hex(SECRET, `${ts}.${BODY.toString()}`);
  t.equal(verifyVapiSignature(BODY, sig, ts, { secret: SECRET }, NOW), 'valid', 'ms timestamp');
  const tsS = String(NOW / 1000);
  t.equal(verifyVapiSignature(BODY, hex(SECRET, `${tsS}.${BODY.toString()}`), tsS, { secret: SECRET }, NOW), 'valid', 's timestamp');
  t.equal(verifyVapiSignature(BODY, `sha256=${sig}`, ts, { secret: SECRET, signaturePrefix: 'sha256=' }, NOW), 'valid', 'prefix');
  t.equal(verifyVapiSignature(BODY, sig, ts, { secret: SECRET, signaturePrefix: 'sha256=' }, NOW), 'invalid', 'prefix absent');
  const b64 = createHmac('sha512', SECRET).update(`${ts}.${BODY.toString()}`).digest('base64');
  t.equal(verifyVapiSignature(BODY, b64, ts, { secret: SECRET, algorithm: 'sha512', signatureEncoding: 'base64' }, NOW), 'valid', 'sha512 base64');
  t.equal(verifyVapiSignature(BODY, hex(SECRET, BODY), undefined, { secret: SECRET, includeTimestamp: false }, NOW), 'valid', 'body only');
  t.equal(verifyVapiSignature(BODY, sig, ts, { secret: 'x' }, NOW), 'invalid');
  t.equal(verifyVapiSignature(BODY, sig, ts, { secret: SECRET }, NOW + 6 * 60_000), 'stale');
  t.equal(verifyVapiSignature(BODY, sig, undefined, { secret: SECRET }, NOW), 'missing', 'no timestamp');
  t.equal(verifyVapiSignature(BODY, undefined, ts, { secret: SECRET }, NOW), 'missing');
  t.end();
});
