/** @module A far end that rings and then ignores our CANCEL: the INVITE still ends (RFC 3261 9.1). */
import t from 'tap';
import { createSocket } from 'node:dgram';
import { startGatewayUaOnTestTransport } from '../../../../test/support/sip-sipp.js';

/** A raw UDP "UAS" that answers every INVITE with 180 Ringing and never anything else. */
async function ringForever(t: { teardown(fn: () => void): void }, answerCancel = false): Promise<{ port: number; cancels: () => number }> {
  const socket = createSocket('udp4');
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
  t.teardown(() => socket.close());
  let cancels = 0;
  socket.on('message', (data, from) => {
    const text = data.toString('latin1');
    // §8.2.6.2: a response copies Via, From, Call-ID and CSeq, and To (with our tag).
    const pick = (name: string): string[] => text.split('\r\n').filter((line) => line.toLowerCase().startsWith(`${name.toLowerCase()}:`));
    const to = pick('To')[0] ?? 'To: <sip:x@127.0.0.1>';
    if (text.startsWith('CANCEL')) {
      cancels += 1;
      // §9.2: the CANCEL itself is answered 200; the INVITE's 487 is never sent.
      if (answerCancel) {
        const ok = ['SIP/2.0 200 OK', ...pick('Via'), ...pick('From'), `${to};tag=ring1`, ...pick('Call-ID'), ...pick('CSeq'), 'Content-Length: 0', '', ''];
        socket.send(Buffer.from(ok.join('\r\n')), from.port, from.address);
      }
    }
    if (!text.startsWith('INVITE')) return;
    const lines = ['SIP/2.0 180 Ringing', ...pick('Via'), ...pick('From'), `${to};tag=ring1`, ...pick('Call-ID'), ...pick('CSeq'), 'Content-Length: 0', '', ''];
    socket.send(Buffer.from(lines.join('\r\n')), from.port, from.address);
  });
  return { port: socket.address().port, cancels: () => cancels };
}

t.test('RFC 3261 9.1: with no final response 64*T1 after the CANCEL, the INVITE ends as cancelled', async (t) => {
  const far = await ringForever(t);
  const { ua } = await startGatewayUaOnTestTransport(t, { timers: { T1: 20, T2: 80, T4: 100 } });
  const call = ua.invite({ target: `sip:bob@127.0.0.1:${far.port}`, from: 'sip:alice@127.0.0.1' });
  call.events.on('progress', () => call.cancel());
  const [status] = await new Promise<[number, string]>((resolve) => call.events.on('failed', (s, r) => resolve([s, r])));
  t.equal(status, 487, 'the attempt fails as Request Terminated');
  t.ok(far.cancels() >= 1, 'the CANCEL was sent (and retransmitted while unanswered)');
});

t.test('RFC 3261 9.1: one CANCEL per INVITE, however often the call is cancelled', async (t) => {
  const far = await ringForever(t, true);
  const { ua } = await startGatewayUaOnTestTransport(t, { timers: { T1: 20, T2: 80, T4: 100 } });
  const call = ua.invite({ target: `sip:bob@127.0.0.1:${far.port}`, from: 'sip:alice@127.0.0.1' });
  call.events.on('progress', () => {
    call.cancel();
    call.cancel();
  });
  const [status] = await new Promise<[number, string]>((resolve) => call.events.on('failed', (s, r) => resolve([s, r])));
  call.cancel();
  t.equal(status, 487, 'the attempt ends as Request Terminated');
  t.equal(far.cancels(), 1, 'the far end got one CANCEL, answered once');
});
