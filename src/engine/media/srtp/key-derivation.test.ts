import t from 'tap';
import { AesCm } from './aes-cm.js';
import { aesCmPrf, deriveSessionKeys } from './key-derivation.js';
import { generateMasterKey, sameMasterKey, SRTP_SUITES, srtpSuite } from './srtp-suite.js';

const hex = (s: string): Buffer => Buffer.from(s.replace(/\s+/g, ''), 'hex');

/** `blocks` AES blocks of keystream for SSRC 0 and index 0: the IV is the salt shifted by 16. */
function keystream(key: Buffer, salt: Buffer, blocks: number): Buffer {
  const out = Buffer.alloc(blocks * 16);
  new AesCm(key, salt).xor(0, 0, out, out, 0, out.length);
  return out;
}

t.test('RFC 3711 B.2: the AES-CM keystream, its first and last three blocks of 65282', (t) => {
  const ks = keystream(hex('2B7E151628AED2A6ABF7158809CF4F3C'), hex('F0F1F2F3F4F5F6F7F8F9FAFBFCFD'), 65282);
  t.equal(ks.subarray(0, 48).toString('hex'), hex('E03EAD0935C95E80E166B16DD92B4EB4 D23513162B02D0F72A43A2FE4A5F97AB 41E95B3BB0A2E8DD477901E4FCA894C0').toString('hex'));
  t.equal(ks.subarray(-48).toString('hex'), hex('EC8CDF7398607CB0F2D21675EA9EA1E4 362B7C3C6773516318A077D7FC5073AE 6A2CC3787889374FBEB4C81B17BA6C44').toString('hex'));
  t.end();
});

t.test('RFC 6188 7.1: the AES-256-CM keystream, its first and last three blocks of 65282', (t) => {
  const key = hex('57f82fe3613fd170a85ec93c40b1f092 2ec4cb0dc025b58272147cc438944a98');
  const ks = keystream(key, hex('F0F1F2F3F4F5F6F7F8F9FAFBFCFD'), 65282);
  t.equal(ks.subarray(0, 48).toString('hex'), '92bdd28a93c3f52511c677d08b5515a49da71b2378a854f67050756ded165bac63c4868b7096d88421b563b8c94c9a31');
  t.equal(ks.subarray(-48).toString('hex'), 'cea518c90fd91ced9cbb18c078a547113dbc4814f4da5f00a08772b63c6a046d6eb246913062a16891433e97dd01a57f');
  t.end();
});

t.test('RFC 3711 4.1.1: SSRC and index enter the IV at their bit positions, and the keystream is its own inverse', (t) => {
  const key = hex('2B7E151628AED2A6ABF7158809CF4F3C');
  const salt = Buffer.alloc(14);
  // With a zero salt, IV = SSRC * 2^64 XOR i * 2^16: octets 4-7 the SSRC, 8-13 the 48-bit index,
  // which is the IV of SSRC 0 and index 0 under a salt of those octets.
  const expected = keystream(key, hex('00000000 11223344 aabbccddeeff'), 2);
  const got = Buffer.alloc(32);
  new AesCm(key, salt).xor(0x11223344, 0xaabbccddeeff, got, got, 0, 32);
  t.equal(got.toString('hex'), expected.toString('hex'));
  const data = Buffer.from('a payload of thirty-three octets!');
  const copy = Buffer.from(data);
  const cm = new AesCm(key, salt);
  cm.xor(7, 65536 + 9, copy, copy, 3, copy.length);
  t.not(copy.toString('hex'), data.toString('hex'));
  t.equal(copy.subarray(0, 3).toString(), 'a p', 'octets before start untouched');
  cm.xor(7, 65536 + 9, copy, copy, 3, copy.length);
  t.equal(copy.toString(), data.toString());
  t.end();
});

t.test('RFC 3711 B.3: key derivation of the cipher key, cipher salt and the 94-octet auth key', (t) => {
  const key = hex('E1F97A0D3E018BE0D64FA32C06DE4139');
  const salt = hex('0EC675AD498AFEEBB6960B3AABE6');
  t.equal(aesCmPrf(key, salt, 0x00, 16).toString('hex'), 'c61e7a93744f39ee10734afe3ff7a087');
  t.equal(aesCmPrf(key, salt, 0x02, 14).toString('hex'), '30cbbc08863d8c85d49db34a9ae1');
  const auth = hex(`CEBE321F6FF7716B6FD4AB49AF256A15 6D38BAA48F0A0ACF3C34E2359E6CDBCE E049646C43D9327AD175578EF7227098
    6371C10C9A369AC2F94A8C5FBCDDDC25 6D6E919A48B610EF17C2041E47403576 6B68642C59BBFC2F34DB60DBDFB2`);
  t.equal(aesCmPrf(key, salt, 0x01, 94).toString('hex'), auth.toString('hex'));
  const keys = deriveSessionKeys({ suite: srtpSuite('AES_CM_128_HMAC_SHA1_80')!, key, salt }, 'srtp');
  t.equal(keys.cipherKey.toString('hex'), 'c61e7a93744f39ee10734afe3ff7a087');
  t.equal(keys.salt.toString('hex'), '30cbbc08863d8c85d49db34a9ae1');
  t.equal(keys.authKey.toString('hex'), auth.subarray(0, 20).toString('hex'), '160-bit k_a: the first 20 octets');
  t.end();
});

t.test('RFC 6188 7.2: AES_256_CM_PRF key derivation', (t) => {
  const master = {
    suite: srtpSuite('AES_256_CM_HMAC_SHA1_80')!,
    key: hex('f0f04914b513f2763a1b1fa130f10e2998f6f6e43e4309d1e622a0e332b9f1b6'),
    salt: hex('3b04803de51ee7c96423ab5b78d2'),
  };
  const keys = deriveSessionKeys(master, 'srtp');
  t.equal(keys.cipherKey.toString('hex'), '5ba1064e30ec51613cad926c5a28ef731ec7fb397f70a960653caf06554cd8c4');
  t.equal(keys.salt.toString('hex'), 'fa31791685ca444a9e07c6c64e93');
  t.equal(keys.authKey.toString('hex'), 'fd9c32d39ed5fbb5a9dc96b30818454d1313dc05');
  t.end();
});

t.test('RFC 3711 4.3.1: SRTCP keys come from labels 0x03-0x05', (t) => {
  const master = { suite: srtpSuite('AES_CM_128_HMAC_SHA1_80')!, key: hex('E1F97A0D3E018BE0D64FA32C06DE4139'), salt: hex('0EC675AD498AFEEBB6960B3AABE6') };
  const srtcp = deriveSessionKeys(master, 'srtcp');
  t.equal(srtcp.cipherKey.toString('hex'), aesCmPrf(master.key, master.salt, 0x03, 16).toString('hex'));
  t.equal(srtcp.authKey.toString('hex'), aesCmPrf(master.key, master.salt, 0x04, 20).toString('hex'));
  t.equal(srtcp.salt.toString('hex'), aesCmPrf(master.key, master.salt, 0x05, 14).toString('hex'));
  t.not(srtcp.cipherKey.toString('hex'), deriveSessionKeys(master, 'srtp').cipherKey.toString('hex'));
  t.throws(() => deriveSessionKeys({ ...master, key: Buffer.alloc(32) }, 'srtp'), RangeError, 'key length must match the suite');
  t.end();
});

t.test('RFC 4568 6.2 / RFC 6188 3: suites, fresh keys and key identity', (t) => {
  t.same(SRTP_SUITES.map((s) => s.name), ['AES_CM_128_HMAC_SHA1_80', 'AES_CM_128_HMAC_SHA1_32', 'AES_256_CM_HMAC_SHA1_80', 'AES_256_CM_HMAC_SHA1_32']);
  t.same(SRTP_SUITES.map((s) => [s.keyLength, s.rtpTagLength, s.rtcpTagLength, s.saltLength]), [[16, 10, 10, 14], [16, 4, 10, 14], [32, 10, 10, 14], [32, 4, 10, 14]]);
  t.equal(srtpSuite('F8_128_HMAC_SHA1_80'), undefined);
  const suite = srtpSuite('AES_256_CM_HMAC_SHA1_32')!;
  const a = generateMasterKey(suite);
  t.equal(a.key.length, 32);
  t.equal(a.salt.length, 14);
  t.ok(sameMasterKey(a, { suite, key: Buffer.from(a.key), salt: Buffer.from(a.salt) }));
  t.notOk(sameMasterKey(a, generateMasterKey(suite)));
  t.notOk(sameMasterKey(a, { ...a, suite: srtpSuite('AES_256_CM_HMAC_SHA1_80')! }));
  t.end();
});
