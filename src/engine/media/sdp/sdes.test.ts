import t from 'tap';
import { parse } from 'sdp-transform';
import { CODECS } from './codecs.js';
import { createAnswer, createOffer, processAnswer, type LocalCapabilities } from './offer-answer.js';
import { SrtpKeyring, usableCryptoOffers, type MediaEncryption } from './sdes.js';

const KEY_128 = Buffer.alloc(30, 7).toString('base64');
const KEY_256 = Buffer.alloc(46, 9).toString('base64');

const sdp = (lines: string[]): string => [...lines, ''].join('\r\n');
const description = (...media: string[][]): string =>
  sdp(['v=0', 'o=- 1 1 IN IP4 192.0.2.10', 's=-', 'c=IN IP4 192.0.2.10', 't=0 0', ...media.flat()]);
const savp = (crypto: string[], port = 6000): string[] => [`m=audio ${port} RTP/SAVP 0 101`, 'a=rtpmap:101 telephone-event/8000', ...crypto.map((c) => `a=crypto:${c}`)];
const avp = (port = 7000): string[] => [`m=audio ${port} RTP/AVP 0`];

const caps = (encryption: MediaEncryption, keyring = new SrtpKeyring()): LocalCapabilities => ({
  address: '127.0.0.1', port: 40000, codecs: [CODECS.PCMU, CODECS.TELEPHONE_EVENT], sessionId: 1, sessionVersion: 1,
  srtp: { encryption, keyring },
});

const mediaOf = (text: string, index = 0) => parse(text).media[index]!;

t.test('RFC 4568 9.1: which a=crypto lines are usable', (t) => {
  const table: [string, string, boolean][] = [
    ['AES_CM_128_HMAC_SHA1_80, key and salt only', `1 AES_CM_128_HMAC_SHA1_80 inline:${KEY_128}`, true],
    ['with a lifetime as a power of two', `1 AES_CM_128_HMAC_SHA1_80 inline:${KEY_128}|2^20`, true],
    ['with a lifetime as a number', `1 AES_CM_128_HMAC_SHA1_32 inline:${KEY_128}|1048576`, true],
    ['AES_256_CM_HMAC_SHA1_80 (RFC 6188) with its 46-octet key', `1 AES_256_CM_HMAC_SHA1_80 inline:${KEY_256}`, true],
    ['an MKI changes the packet layout', `1 AES_CM_128_HMAC_SHA1_80 inline:${KEY_128}|2^20|1:4`, false],
    ['a session parameter changes the transform (6.3)', `1 AES_CM_128_HMAC_SHA1_80 inline:${KEY_128} UNENCRYPTED_SRTP`, false],
    ['two keys (only with MKIs)', `1 AES_CM_128_HMAC_SHA1_80 inline:${KEY_128}|2^20|1:4;inline:${KEY_128}|2^20|2:4`, false],
    ['a 128-bit suite with a 256-bit key', `1 AES_CM_128_HMAC_SHA1_80 inline:${KEY_256}`, false],
    ['a suite we do not implement', `1 AEAD_AES_128_GCM inline:${Buffer.alloc(28).toString('base64')}`, false],
    ['F8 mode', `1 F8_128_HMAC_SHA1_80 inline:${KEY_128}`, false],
  ];
  for (const [name, line, usable] of table) t.equal(usableCryptoOffers(mediaOf(description(savp([line])))).length, usable ? 1 : 0, name);
  const [offer] = usableCryptoOffers(mediaOf(description(savp([`5 AES_CM_128_HMAC_SHA1_32 inline:${KEY_128}`]))));
  t.equal(offer!.tag, 5);
  t.same(offer!.master.key, Buffer.alloc(16, 7), 'the first 16 octets are the master key');
  t.same(offer!.master.salt, Buffer.alloc(14, 7), 'the last 14 the master salt');
  t.end();
});

t.test('RFC 4568 7.1.2: an SRTP offer is answered RTP/SAVP with one line, same tag and suite, our own key', (t) => {
  const offer = description(savp([`1 AEAD_AES_128_GCM inline:${Buffer.alloc(28).toString('base64')}`, `2 AES_CM_128_HMAC_SHA1_32 inline:${KEY_128}`, `3 AES_CM_128_HMAC_SHA1_80 inline:${KEY_128}`]));
  for (const encryption of ['allowed', 'required'] as const) {
    const result = createAnswer(offer, caps(encryption));
    if ('error' in result) throw new Error(result.detail);
    const media = mediaOf(result.sdp);
    t.equal(media.protocol, 'RTP/SAVP', `${encryption}: the answer keeps the offer's profile`);
    t.equal(media.crypto?.length, 1, 'with exactly one crypto line');
    t.match(media.crypto?.[0], { id: 2, suite: 'AES_CM_128_HMAC_SHA1_32' }, 'the first usable offered line, in the offerer\'s order');
    t.not(media.crypto?.[0]?.config, `inline:${KEY_128}`, 'with our key, not the offerer\'s');
    t.equal(result.negotiated.srtp?.suite, 'AES_CM_128_HMAC_SHA1_32');
    t.same(result.negotiated.srtp?.receive.key, Buffer.alloc(16, 7), 'we decrypt with the offerer\'s key');
    t.equal(Buffer.concat([result.negotiated.srtp!.send.key, result.negotiated.srtp!.send.salt]).toString('base64'), media.crypto?.[0]?.config.slice('inline:'.length), 'and encrypt with the key we answered');
  }
  t.end();
});

t.test('RFC 3264 6 and RFC 4568 7.1.2: which stream each encryption setting answers', (t) => {
  const line = `1 AES_CM_128_HMAC_SHA1_80 inline:${KEY_128}`;
  const table: { name: string; offer: string; encryption: MediaEncryption; answered: string | null; index?: number; error?: string }[] = [
    { name: 'disabled: an SRTP-only offer', offer: description(savp([line])), encryption: 'disabled', answered: null, error: 'no-audio' },
    { name: 'disabled: SRTP and plain streams', offer: description(savp([line]), avp()), encryption: 'disabled', answered: 'RTP/AVP', index: 1 },
    { name: 'allowed: a plain offer', offer: description(avp()), encryption: 'allowed', answered: 'RTP/AVP', index: 0 },
    { name: 'allowed: SRTP and plain streams prefer SRTP', offer: description(avp(), savp([line])), encryption: 'allowed', answered: 'RTP/SAVP', index: 1 },
    { name: 'allowed: SRTP without a usable line falls back to the plain stream', offer: description(savp([`1 AEAD_AES_128_GCM inline:${KEY_128}`]), avp()), encryption: 'allowed', answered: 'RTP/AVP', index: 1 },
    { name: 'allowed: SRTP-only without a usable line', offer: description(savp([`1 AES_CM_128_HMAC_SHA1_80 inline:${KEY_128}|2^20|1:4`])), encryption: 'allowed', answered: null, error: 'no-usable-crypto' },
    { name: 'required: a plain offer', offer: description(avp()), encryption: 'required', answered: null, error: 'no-audio' },
    { name: 'required: RTP/SAVPF (no SDES profile of ours)', offer: description(['m=audio 6000 RTP/SAVPF 0', `a=crypto:${line}`]), encryption: 'required', answered: null, error: 'no-audio' },
  ];
  for (const row of table) {
    const result = createAnswer(row.offer, caps(row.encryption));
    if (row.answered === null) {
      t.match(result, { error: row.error, status: 488 }, row.name);
      continue;
    }
    if ('error' in result) {
      t.fail(`${row.name}: ${result.detail}`);
      continue;
    }
    const media = parse(result.sdp).media;
    t.equal(media[row.index!]?.protocol, row.answered, row.name);
    t.equal(media[row.index!]?.port, 40000, `${row.name}: answered on our port`);
    t.ok(media.every((m, i) => i === row.index || m.port === 0), `${row.name}: the other streams declined with port 0`);
    t.equal(result.negotiated.srtp === null, row.answered === 'RTP/AVP', `${row.name}: keys only for SRTP`);
  }
  t.end();
});

t.test('RFC 4568 7.1.1: offers are RTP/SAVP with every suite only when encryption is required', (t) => {
  const keyring = new SrtpKeyring();
  const media = mediaOf(createOffer(caps('required', keyring)));
  t.equal(media.protocol, 'RTP/SAVP');
  t.same(media.crypto?.map((c) => [c.id, c.suite]), [
    [1, 'AES_CM_128_HMAC_SHA1_80'], [2, 'AES_CM_128_HMAC_SHA1_32'], [3, 'AES_256_CM_HMAC_SHA1_80'], [4, 'AES_256_CM_HMAC_SHA1_32'],
  ], 'one line per suite, in our order of preference, tags from 1');
  t.same(usableCryptoOffers(media).map((c) => c.master.key.length), [16, 16, 32, 32], 'each line carries a key of its suite\'s length');
  t.same(mediaOf(createOffer({ ...caps('required', keyring), sessionVersion: 2 })).crypto, media.crypto, 'a re-offer repeats the same keys (7.1.4), so contexts go on');
  t.not(mediaOf(createOffer(caps('required'))).crypto?.[0]?.config, media.crypto?.[0]?.config, 'another leg has other keys');
  const plain = mediaOf(createOffer(caps('allowed')));
  t.equal(plain.protocol, 'RTP/AVP', 'allowed offers plain RTP');
  t.equal(plain.crypto, undefined, 'without keys');
  t.end();
});

t.test('RFC 4568 7.1.3: the answer to our SRTP offer must accept one of our lines', (t) => {
  const keyring = new SrtpKeyring();
  const local = caps('required', keyring);
  createOffer(local);
  const answered = processAnswer(description(savp([`2 AES_CM_128_HMAC_SHA1_32 inline:${KEY_128}`])), local);
  if ('error' in answered) throw new Error(answered.detail);
  t.equal(answered.srtp?.suite, 'AES_CM_128_HMAC_SHA1_32');
  t.equal(answered.srtp?.send, keyring.keyFor('AES_CM_128_HMAC_SHA1_32'), 'we encrypt with the key of the accepted line');
  t.same(answered.srtp?.receive.key, Buffer.alloc(16, 7), 'and decrypt with the answerer\'s');
  const table: [string, string][] = [
    ['a tag we gave another suite', description(savp([`1 AES_CM_128_HMAC_SHA1_32 inline:${KEY_128}`]))],
    ['two lines', description(savp([`1 AES_CM_128_HMAC_SHA1_80 inline:${KEY_128}`, `2 AES_CM_128_HMAC_SHA1_32 inline:${KEY_128}`]))],
    ['no line', description(savp([]))],
  ];
  for (const [name, answer] of table) t.match(processAnswer(answer, local), { error: 'no-usable-crypto', status: 488 }, name);
  t.match(processAnswer(description(avp()), local), { status: 488 }, 'a plain RTP/AVP answer to an RTP/SAVP offer');
  t.end();
});

t.test('RFC 3264 6: an answer to a plain offer is read as plain, even from an allowed leg', (t) => {
  const local = caps('allowed');
  t.match(processAnswer(description(avp()), local), { srtp: null, codec: { encoding: 'PCMU' } });
  t.match(processAnswer(description(savp([`1 AES_CM_128_HMAC_SHA1_80 inline:${KEY_128}`])), local), { status: 488 }, 'an SRTP answer to a plain offer');
  t.end();
});
