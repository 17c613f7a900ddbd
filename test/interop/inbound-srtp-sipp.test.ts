/**
 * SRTP offers and re-offers from a carrier (RFC 4568 with RFC 3264), against sipp: a carrier set
 * to `media_encryption: required` calls a DID with an RTP/SAVP offer, then re-offers plain RTP
 * (refused: an encrypted call stays encrypted) and SRTP under a new key of its own (answered with
 * the gateway's key unchanged, so its contexts go on, RFC 4568 7.1.4). Media over SRTP is proven
 * against baresip in srtp-baresip.test.ts; sipp cannot encrypt, so the plain RTP it plays must be
 * dropped as unauthenticated and reported when the call ends.
 */
import t from 'tap';
import { detailWhen, ended, inboundCall, responsesIn, sippMessages, sippPassed, startInboundRig } from '../support/inbound-sipp-rig.js';
import { needPeer } from '../support/peers.js';

/** The audio m-line's profile and the a=crypto lines of a message. */
function srtpOf(message: string): { profile: string | undefined; crypto: string[] } {
  return {
    profile: /^m=audio \d+ (\S+) /m.exec(message)?.[1],
    crypto: message.split('\n').filter((line) => line.startsWith('a=crypto:')),
  };
}

t.test('RFC 4568 7.1.2 and 7.1.4: an SRTP call is answered RTP/SAVP, refuses a plain re-offer with 488, and keeps its key when the carrier re-keys', async (t) => {
  if (!needPeer(t, 'sipp')) return;
  const rig = await startInboundRig(t, { edgeScenario: 'inbound-edge-auth.xml', mediaEncryption: 'required' });
  const carrier = await rig.call('inbound-uac-srtp-reoffers.xml');
  const live = await inboundCall(rig.gw, rig.did);
  const keyed = await detailWhen(rig.gw, live.id, 'the caller leg keyed', (d) => (d.session?.remote as { srtp?: string } | undefined)?.srtp !== undefined);
  t.equal((keyed.session?.remote as { srtp?: string }).srtp, 'AES_CM_128_HMAC_SHA1_80', 'the carrier leg runs the offered suite');
  await sippPassed(t, carrier, 'the carrier (200 to the SRTP offer, 488 to the plain re-offer, 200 to the re-key, BYE answered)');
  await sippPassed(t, rig.edge, 'the edge (BYE received)');

  const log = sippMessages(carrier);
  const answers = responsesIn(log, 200, 'INVITE');
  const first = srtpOf(answers.find((m) => /^CSeq:\s*1 INVITE$/m.test(m)) ?? '');
  const rekeyed = srtpOf(answers.find((m) => /^CSeq:\s*3 INVITE$/m.test(m)) ?? '');
  t.equal(first.profile, 'RTP/SAVP', 'the answer keeps the offer\'s profile');
  t.equal(first.crypto.length, 1, 'with one crypto line');
  t.match(first.crypto[0], /^a=crypto:1 AES_CM_128_HMAC_SHA1_80 inline:[A-Za-z0-9+/]{40}$/, 'the offered tag and suite, with a 30-octet key and salt of ours');
  t.notMatch(first.crypto[0], /QUFBQUFB/, 'not the carrier\'s key');
  t.match(responsesIn(log, 488, 'INVITE')[0], /^CSeq:\s*2 INVITE$/m, 'the plain RTP/AVP re-offer got 488');
  t.equal(rekeyed.profile, 'RTP/SAVP', 'the re-key is answered RTP/SAVP');
  t.same(rekeyed.crypto, first.crypto, 'with the same key as before (RFC 4568 7.1.4)');
  const done = await ended(rig.gw, live.id);
  t.match(done.cdr, { end_reason: 'completed', hangup_by: 'caller' }, 'the refused re-offer did not end the call');
  // RFC 3711 3.3: sipp's plain RTP on the SRTP leg never passed; the end of the call says so.
  const report = rig.gw.logs.find((l) => l.msg === 'SRTP packets from the remote party failed authentication');
  t.ok(report, 'the call\'s end logs the packets that failed authentication');
  t.ok(Number(report?.packets_unauthenticated) > 20, `sipp's plain RTP was dropped (${String(report?.packets_unauthenticated)} packets)`);
  t.equal(report?.packets_received, 0, 'and none of it was taken as media');
});
