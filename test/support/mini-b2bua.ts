/**
 * @module A test-only back-to-back user agent: our SipUserAgent (on the product's TransportLayer)
 * answers one caller, places one call to a fixed callee, and bridges the two RTP legs with our
 * MediaBridge; a BYE from either side ends the other. Just enough glue for real-peer media tests.
 */
import { systemClock } from '../../src/common/clock.js';
import {
  bridgeLegOf, CODECS, createAnswer, createOffer, isPortsExhausted, MediaBridge, processAnswer, RtpSession, SrtpKeyring,
  type LocalCapabilities, type MediaEncryption, type NegotiatedAudio,
} from '../../src/engine/media/index.js';
import type { InboundCall, SessionDialog } from '../../src/engine/sip/index.js';
import { testPortPool } from './rtp-peer.js';
import { startGatewayUa } from './sip-sipp.js';

interface Teardown {
  teardown(fn: () => void | Promise<void>): void;
}

/** Which side hung up first. */
export type HangupSide = 'caller' | 'callee';

/** A running B2BUA. */
export interface MiniB2bua {
  /** Its SIP UDP port on 127.0.0.1. */
  sipPort: number;
  /** The bridge, once both legs are up. */
  bridge(): MediaBridge | null;
  /** Resolves once both legs are up and bridged. */
  bridged: Promise<MediaBridge>;
  /** Resolves with the side that sent the first BYE, after the other side's BYE is answered. */
  ended: Promise<HangupSide>;
  /** Failures while setting up the call (also answered to the caller with an error status). */
  errors: Error[];
  /** Dialogs our user agent still holds (0 once both legs are torn down). */
  dialogCount(): number;
}

const capabilities = (port: number, encryption: MediaEncryption): LocalCapabilities => ({
  address: '127.0.0.1', port, codecs: [CODECS.PCMU, CODECS.PCMA, CODECS.TELEPHONE_EVENT], sessionId: 1, sessionVersion: 1,
  srtp: { encryption, keyring: new SrtpKeyring() },
});

const wire = (s: RtpSession, n: NegotiatedAudio): void => {
  s.setRemote(n.remote.rtp, { rtcp: n.remote.rtcp, rtcpMux: n.rtcpMux });
  s.setSrtp(n.srtp ? { send: n.srtp.send, receive: n.srtp.receive } : null);
};

/**
 * Starts the B2BUA for one call: the call it receives is forwarded to `calleeUri` (e.g.
 * `sip:bob@127.0.0.1:5070`), both legs with media `encryption` (plain RTP by default).
 */
export async function startMiniB2bua(t: Teardown, calleeUri: string, encryption: MediaEncryption = 'disabled'): Promise<MiniB2bua> {
  const { ua, transport } = await startGatewayUa(t);
  const ports = testPortPool();
  const open = async (): Promise<RtpSession> => {
    const s = await RtpSession.open({ clock: systemClock, ports, bindAddress: '127.0.0.1', mediaTimeoutMs: 0 });
    if (isPortsExhausted(s)) throw new Error('no RTP ports');
    t.teardown(() => s.close());
    return s;
  };
  const errors: Error[] = [];
  let bridge: MediaBridge | null = null;
  let onBridged: (b: MediaBridge) => void = () => undefined;
  let onEnded: (side: HangupSide) => void = () => undefined;
  const bridged = new Promise<MediaBridge>((resolve) => { onBridged = resolve; });
  const ended = new Promise<HangupSide>((resolve) => { onEnded = resolve; });
  t.teardown(() => bridge?.close());

  const join = (caller: SessionDialog, callee: SessionDialog): void => {
    let first: HangupSide | null = null;
    const hangUp = (side: HangupSide, other: SessionDialog): void => {
      if (first) return;
      first = side;
      bridge?.close();
      void other.bye().then(() => onEnded(side), (err: Error) => { errors.push(err); onEnded(side); });
    };
    caller.events.on('bye', () => hangUp('caller', callee));
    callee.events.on('bye', () => hangUp('callee', caller));
  };

  const onInvite = async (call: InboundCall): Promise<void> => {
    call.progress(180);
    const [a, b] = [await open(), await open()];
    const localA = capabilities(a.localPort, encryption);
    const localB = capabilities(b.localPort, encryption);
    const out = ua.invite({ target: calleeUri, from: 'sip:bridge@127.0.0.1', sdp: Buffer.from(createOffer(localB)) });
    out.events.on('failed', (status, reason) => {
      errors.push(new Error(`callee answered ${status} ${reason}`));
      call.reject(status >= 400 && status < 700 ? status : 502);
    });
    out.events.on('accepted', (callee, response) => {
      const far = processAnswer(response.body.toString('utf8'), localB);
      const near = createAnswer(call.offer.toString('utf8'), localA);
      if ('error' in far || 'error' in near) {
        errors.push(new Error('SDP negotiation failed'));
        call.reject(488);
        void callee.bye();
        return;
      }
      wire(a, near.negotiated);
      wire(b, far);
      bridge = new MediaBridge({ clock: systemClock, a: bridgeLegOf(a, near.negotiated), b: bridgeLegOf(b, far) });
      const caller = call.accept(Buffer.from(near.sdp));
      if (!caller) {
        errors.push(new Error('caller went away before the answer'));
        void callee.bye();
        return;
      }
      join(caller, callee);
      onBridged(bridge);
    });
  };

  ua.events.on('invite', (call) => {
    onInvite(call).catch((err: Error) => {
      errors.push(err);
      call.reject(500);
    });
  });
  return { sipPort: transport.udpPort, bridge: () => bridge, bridged, ended, errors, dialogCount: () => ua.dialogCount };
}
