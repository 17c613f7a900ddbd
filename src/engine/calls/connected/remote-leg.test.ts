/**
 * @module RemoteLeg, the remote party's leg, answering the far end's re-offers over real SIP on
 * loopback (RFC 3264 8): hold directions, a move to another codec, refusals with 488, and an
 * offer asked for by a re-INVITE without a body (RFC 3261 14.2), always from the same port.
 */
import t from 'tap';
import { createAnswer, isSdpRejection, type NegotiatedAudio } from '../../media/index.js';
import type { SessionDialog } from '../../sip/index.js';
import { carrierLegCapabilities, RemoteLeg } from './remote-leg.js';
import { callRig, Phone } from '../../../../test/support/call-engine-rig.js';

/** A leg answered by the gateway's side (on `rig.phone`) to a call from `far`; `far`'s dialog sends the re-offers. */
async function leg(t: Parameters<typeof callRig>[0]) {
  const rig = await callRig(t);
  const far = await Phone.open(t);
  const rtp = await rig.deps.media.open(rig.carrier);
  if (!rtp) throw new Error('no RTP port');
  t.teardown(() => rtp.close());
  const changes: { audio: NegotiatedAudio; previous: NegotiatedAudio }[] = [];
  const ours = new Promise<RemoteLeg>((resolve) => {
    rig.phone.onInvite = (call) => {
      const caps = carrierLegCapabilities(rig.deps.media.address, rig.carrier, rtp);
      const answer = createAnswer(call.offer.toString(), caps);
      if (isSdpRejection(answer)) throw new Error(answer.error);
      const dialog = call.accept(Buffer.from(answer.sdp))!;
      const remote = new RemoteLeg(dialog, rtp, answer.negotiated, caps);
      remote.onAudioChange = (audio, previous) => changes.push({ audio, previous });
      resolve(remote);
    };
  });
  const outgoing = far.ua.invite({ target: `${rig.phone.uri.replace('sip:', 'sip:+15550100@')}`, from: 'sip:+15550123@127.0.0.1', sdp: far.sdp() });
  const dialog = await new Promise<SessionDialog>((resolve) => outgoing.events.on('accepted', (s) => resolve(s)));
  return { remote: await ours, dialog, far, rtp, changes };
}

const body = (outcome: Awaited<ReturnType<SessionDialog['reinvite']>>): string => ('body' in outcome ? outcome.body.toString() : '');

t.test('RFC 3264 8.4: hold and resume re-offers are answered with the matching direction from the same port, with a new o= version', async (t) => {
  const { remote, dialog, far, rtp, changes } = await leg(t);
  const cases: [string, string, boolean][] = [['sendonly', 'recvonly', true], ['inactive', 'inactive', true], ['sendrecv', 'sendrecv', false]];
  let theirs = 1;
  let ours = 1;
  for (const [offered, answered, onHold] of cases) {
    const outcome = await dialog.reinvite(far.sdp({ direction: offered, version: ++theirs }));
    ours += 1;
    t.equal(outcome.status, 200, `${offered} is accepted`);
    t.match(body(outcome), new RegExp(`a=${answered}`), `${offered} is answered ${answered}`);
    t.match(body(outcome), new RegExp(`m=audio ${rtp.localPort} `), 'from the same port');
    t.match(body(outcome), new RegExp(`o=\\S+ \\d+ ${ours} IN`), 'RFC 3264 8: the answer\'s o= version went up by one');
    t.equal(remote.audio.remote.onHold, onHold, `the leg knows the far end ${onHold ? 'holds' : 'resumed'}`);
  }
  t.same(changes.map((c) => [c.previous.remote.onHold, c.audio.remote.onHold]), [[false, true], [true, true], [true, false]], 'the owner hears of each change');
  t.equal(remote.describe().reoffers, 3);
});

t.test('RFC 3264 8.3.2: a re-offer without the codec in use moves the leg to one it can convert to (PCMA)', async (t) => {
  const { remote, dialog, far, changes } = await leg(t);
  t.equal(remote.audio.codec.encoding, 'PCMU');
  const outcome = await dialog.reinvite(far.sdp({ codecs: [[8, 'PCMA'], [101, 'telephone-event']], version: 2 }));
  t.equal(outcome.status, 200);
  t.match(body(outcome), /m=audio \d+ RTP\/AVP 8 101/);
  t.equal(remote.audio.codec.encoding, 'PCMA');
  t.equal(changes.at(-1)?.previous.codec.encoding, 'PCMU', 'the owner is told what it was');
});

t.test('RFC 3264 6 / RFC 3261 14.2: a re-offer with nothing usable gets 488 and the session goes on as it was', async (t) => {
  const { remote, dialog, far, changes } = await leg(t);
  const outcome = await dialog.reinvite(far.sdp({ codecs: [[9, 'G722']], version: 2 }));
  t.equal(outcome.status, 488);
  t.equal(remote.audio.codec.encoding, 'PCMU');
  t.equal(changes.length, 0);
  t.equal((await dialog.reinvite(far.sdp({ direction: 'sendonly', version: 3 }))).status, 200, 'a later re-offer still works');
});

t.test('RFC 3261 14.2: a re-INVITE without a body gets our offer, from the same port and with the codec in use first', async (t) => {
  const { dialog, rtp } = await leg(t);
  const outcome = await dialog.reinvite(undefined);
  t.equal(outcome.status, 200);
  t.match(body(outcome), new RegExp(`m=audio ${rtp.localPort} RTP/AVP 0 `));
  t.match(body(outcome), /a=sendrecv/);
});
