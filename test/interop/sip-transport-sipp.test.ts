/**
 * @module sipp's built-in `uac` against a minimal echo UAS made only of the parser, serializer and
 * TransportLayer (no transactions, no dialogs): proves framing and serialization against a real
 * peer over UDP and TCP. The full UAS core has its own interop tests.
 */
import t, { type Test } from 'tap';
import { TransportLayer } from '../../src/engine/sip/transport/transport-layer.js';
import type { MessageSource, TransportProtocol } from '../../src/engine/sip/transport/transport.js';
import { createResponse } from '../../src/engine/sip/messages/response.js';
import type { SipMessage, SipRequest, SipResponse } from '../../src/engine/sip/messages/sip-message.js';
import type { SipTransportPort } from '../../src/engine/sip/user-agent-core/transport-port.js';
import { SipUserAgent } from '../../src/engine/sip/index.js';
import { needPeer, tempWorkdir } from '../support/peers.js';
import { freePort, startSipp, TEST_SDP } from '../support/sip-sipp.js';

interface EchoUas {
  layer: TransportLayer;
  counts: Record<string, number>;
}

/**
 * Answers INVITE with 100 then 200 + fixed SDP, absorbs ACK, answers BYE with 200. A retransmitted
 * INVITE gets the same 200 again (what an INVITE server transaction would do, RFC 3261 17.2.1).
 */
async function startEchoUas(t: Test, protocol: TransportProtocol): Promise<EchoUas> {
  const counts: Record<string, number> = {};
  const answered = new Map<string, SipResponse>();
  const layer: TransportLayer = new TransportLayer({
    listen: [{ protocol, host: '127.0.0.1', port: 0 }],
    delegate: {
      onMessage: (message: SipMessage, source: MessageSource) => {
        if (message.kind !== 'request') return;
        counts[message.method] = (counts[message.method] ?? 0) + 1;
        void answer(message, source).catch((err: unknown) => t.fail(String(err)));
      },
      onMalformed: (e) => t.fail(`malformed message from sipp: ${e.reason}`),
    },
  });
  const answer = async (req: SipRequest, source: MessageSource): Promise<void> => {
    if (req.method === 'ACK') return;
    if (req.method === 'INVITE') {
      const previous = answered.get(req.callId);
      if (previous) return void (await layer.sendResponse(previous, source));
      await layer.sendResponse(createResponse(req, 100), source);
      const local = layer.localAddress(protocol);
      const ok = createResponse(req, 200, undefined, {
        toTag: `uas${answered.size}`,
        headers: [['Contact', `<sip:echo@${local.host}:${local.port};transport=${protocol.toLowerCase()}>`]],
        body: TEST_SDP,
        contentType: 'application/sdp',
      });
      answered.set(req.callId, ok);
      return void (await layer.sendResponse(ok, source));
    }
    await layer.sendResponse(createResponse(req, req.method === 'BYE' ? 200 : 501), source);
  };
  await layer.start();
  t.teardown(() => layer.stop());
  // The UA core's transport port is satisfied by the TransportLayer as it is.
  const port: SipTransportPort = layer;
  t.ok(port.isReliable('TCP') && !port.isReliable('UDP'));
  return { layer, counts };
}

for (const [protocol, flag] of [['UDP', 'u1'], ['TCP', 't1']] as const) {
  t.test(`RFC 3261 18: sipp uac against the transport-only echo UAS over ${protocol}`, async (t) => {
    if (!needPeer(t, 'sipp')) return;
    const uas = await startEchoUas(t, protocol);
    const cwd = tempWorkdir(t);
    const sippPort = await freePort();
    const calls = 20;
    const target = `127.0.0.1:${uas.layer.listeningPoint(protocol)!.port}`;
    const run = startSipp(t, cwd, ['-sn', 'uac', target, '-t', flag, '-i', '127.0.0.1', '-p', String(sippPort),
      '-m', String(calls), '-r', '50', '-d', '20', '-timeout', '30s', '-timeout_error']);
    const r = await run.done;
    t.equal(r.code, 0, `sipp completed every call (stderr: ${r.stderr.slice(0, 300)})`);
    t.equal(uas.counts.INVITE, calls);
    t.equal(uas.counts.ACK, calls);
    t.equal(uas.counts.BYE, calls);
  });
}

for (const [protocol, flag] of [['UDP', 'u1'], ['TCP', 't1']] as const) {
  t.test(`RFC 3261 18 + 17: the gateway user agent on the TransportLayer answers sipp uac over ${protocol}`, async (t) => {
    if (!needPeer(t, 'sipp')) return;
    const layer: TransportLayer = new TransportLayer({
      listen: [{ protocol, host: '127.0.0.1', port: 0 }],
      delegate: { onMessage: (m, source) => ua.receive(m, source), onMalformed: (e) => t.fail(e.reason) },
    });
    const ua = new SipUserAgent({ transport: layer, userAgent: 'voice-gateway-test' });
    await layer.start();
    t.teardown(async () => {
      ua.dispose();
      await layer.stop();
    });
    let invites = 0;
    ua.events.on('invite', (call) => {
      invites++;
      call.accept(TEST_SDP);
    });
    const cwd = tempWorkdir(t);
    const sippPort = await freePort();
    const run = startSipp(t, cwd, ['-sn', 'uac', `127.0.0.1:${layer.listeningPoint(protocol)!.port}`, '-t', flag, '-i', '127.0.0.1',
      '-p', String(sippPort), '-m', '10', '-r', '20', '-d', '20', '-timeout', '30s', '-timeout_error']);
    const r = await run.done;
    t.equal(r.code, 0, `sipp completed every call (stderr: ${r.stderr.slice(0, 300)})`);
    t.equal(invites, 10);
  });
}
