/** @module baresip (a real UA with G.711 audio) calling the gateway's SIP stack and called by it; each call is completed and torn down. */
import t, { type Test } from 'tap';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startBaresip, toneWav, type StartedBaresip } from '../support/baresip-peer.js';
import { needPeer, tempWorkdir } from '../support/peers.js';
import { startGatewayUa, TEST_SDP } from '../support/sip-sipp.js';
import type { SessionDialog } from '../../src/engine/sip/index.js';

/** A baresip account `bob` that auto-answers and plays a tone longer than any call here. */
function startBob(t: Test): Promise<StartedBaresip> {
  const dir = tempWorkdir(t);
  writeFileSync(join(dir, 'tone.wav'), toneWav(30));
  return startBaresip(t, { dir, sourceWav: join(dir, 'tone.wav'), user: 'bob', autoAnswer: true, rtpPorts: '31900-31999' });
}

t.test('RFC 3261 13/15: baresip calls the gateway; we answer, it ACKs, we hang up with BYE', async (t) => {
  if (!needPeer(t, 'baresip')) return;
  const { ua, transport } = await startGatewayUa(t);
  const bs = await startBob(t);
  const acked = new Promise<SessionDialog>((resolve) => ua.events.on('invite', (call) => {
    call.progress(180);
    const s = call.accept(TEST_SDP);
    s?.events.on('ack', () => resolve(s));
  }));
  await bs.command('dial', `sip:agent@127.0.0.1:${transport.udpPort}`);
  const session = await acked;
  await bs.waitFor(/established/i);
  await new Promise((r) => setTimeout(r, 500));
  t.equal(await session.bye(), 200, 'baresip answered our BYE');
  await bs.waitFor(/terminated|closed/i);
  t.equal(ua.dialogCount, 0);
});

t.test('RFC 3261 13/15: the gateway calls baresip (auto answer); baresip hangs up and we answer its BYE', async (t) => {
  if (!needPeer(t, 'baresip')) return;
  const { ua } = await startGatewayUa(t);
  const bs = await startBob(t);
  const call = ua.invite({ target: `sip:bob@127.0.0.1:${bs.sipPort}`, from: 'sip:gw@127.0.0.1', sdp: TEST_SDP });
  const session = await new Promise<SessionDialog>((resolve, reject) => {
    call.events.on('accepted', (s, res) => {
      t.match(res.body.toString(), /m=audio \d+ RTP\/AVP/, 'baresip answered with SDP');
      resolve(s);
    });
    call.events.on('failed', (status) => reject(new Error(`call failed with ${status}`)));
  });
  await bs.waitFor(/established/i);
  const ended = new Promise<string>((resolve) => session.events.on('terminated', (reason) => resolve(reason)));
  await new Promise((r) => setTimeout(r, 500));
  await bs.command('hangup');
  t.equal(await ended, 'remote-bye');
  t.equal(ua.dialogCount, 0);
});
