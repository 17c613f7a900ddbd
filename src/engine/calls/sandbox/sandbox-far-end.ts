/**
 * @module The built-in sandbox carrier's far end: a SIP user agent and RTP endpoint on loopback
 * that rings, answers, plays an announcement and echoes, so calls work without a real carrier.
 */
import { createSocket } from 'node:dgram';
import type { Clock } from '../../../common/clock.js';
import type { Logger } from '../../../common/logger.js';
import type { PortPool } from '../../media/index.js';
import { SipUserAgent, TransportLayer, type InboundCall, type TransportLayerDelegate } from '../../sip/index.js';
import { behaviourFor } from './reserved-numbers.js';
import { SandboxCall } from './sandbox-call.js';
import { SandboxMedia } from './sandbox-media.js';

const DEFAULT_HOST = '127.0.0.1';
const DEFAULT_RING_MS = 1000;
const DEFAULT_MAX_CALL_MS = 10 * 60_000;
/** How long {@link SandboxFarEnd.stop} waits for the BYEs to be answered before closing anyway. */
const STOP_GRACE_MS = 2000;
/** Attempts at finding one port number free for both UDP and TCP. */
const LISTEN_ATTEMPTS = 8;

/** Options of {@link SandboxFarEnd.start}. */
export interface SandboxFarEndOptions {
  clock: Clock;
  /** RTP ports (shared with the gateway's pool). */
  ports: PortPool;
  /** Address SIP and RTP bind to, and only there; default 127.0.0.1. */
  host?: string;
  /** Time between 180 Ringing and the answer (or the reserved failure); default 1000 ms. */
  ringMs?: number;
  /** 8 kHz PCM played once after the answer, before the echo starts. */
  announcement: Int16Array;
  /** After this long the far end hangs up itself with BYE; default 10 minutes. */
  maxCallMs?: number;
  logger?: Logger;
}

/** The options with every default filled in. */
type ResolvedOptions = Required<Omit<SandboxFarEndOptions, 'logger'>> & { logger?: Logger };

/**
 * The sandbox carrier's far end. The gateway sends it INVITEs as it would to a real carrier (to
 * {@link SandboxFarEnd.uri}, the dialled number in the Request-URI user part); it rings, then
 * answers with PCMU or PCMA and telephone-event, plays the announcement once and echoes every
 * audio and RFC 4733 packet it hears. Reserved numbers (see reserved-numbers.ts) fail on purpose.
 */
export class SandboxFarEnd {
  /** The sandbox carrier's outbound URI over UDP, e.g. `sip:127.0.0.1:40123;transport=udp`. */
  readonly uri: string;
  /** The same listening port over TCP. */
  readonly tcpUri: string;
  readonly #layer: TransportLayer;
  readonly #ua: SipUserAgent;
  readonly #calls = new Set<SandboxCall>();
  readonly #options: ResolvedOptions;
  #stopping: Promise<void> | null = null;

  private constructor(layer: TransportLayer, ua: SipUserAgent, options: ResolvedOptions) {
    this.#layer = layer;
    this.#ua = ua;
    this.#options = options;
    const { host, port } = layer.localAddress('UDP');
    const uriHost = host.includes(':') ? `[${host}]` : host;
    this.uri = `sip:${uriHost}:${port};transport=udp`;
    this.tcpUri = `sip:${uriHost}:${layer.localAddress('TCP').port};transport=tcp`;
    ua.events.on('invite', (call) => this.#onInvite(call));
  }

  /** Binds SIP (UDP and TCP on one port of `host`) and starts answering. */
  static async start(options: SandboxFarEndOptions): Promise<SandboxFarEnd> {
    const resolved: ResolvedOptions = {
      ...options,
      host: options.host ?? DEFAULT_HOST,
      ringMs: options.ringMs ?? DEFAULT_RING_MS,
      maxCallMs: options.maxCallMs ?? DEFAULT_MAX_CALL_MS,
    };
    // The layer needs its delegate before the UA exists, and the UA needs the layer.
    const up: { ua?: SipUserAgent } = {};
    const layer = await listenOnOnePort(resolved.host, resolved.clock, { onMessage: (m, s) => up.ua?.receive(m, s) });
    const ua = new SipUserAgent({ transport: layer, clock: resolved.clock, userAgent: 'voice-gateway-sandbox', contactUser: 'sandbox' });
    up.ua = ua;
    return new SandboxFarEnd(layer, ua, resolved);
  }

  /** Calls not yet over, ringing ones included. */
  get activeCalls(): number {
    return this.#calls.size;
  }

  /** Ends every call (BYE once answered, 503 before), then closes the sockets. Idempotent. */
  stop(): Promise<void> {
    this.#stopping ??= this.#stop();
    return this.#stopping;
  }

  async #stop(): Promise<void> {
    const hangUps = Promise.allSettled([...this.#calls].map((c) => c.hangUp()));
    // A BYE the caller never answers would hold the shutdown for Timer F (64*T1, RFC 3261 §17.1.2.2).
    await new Promise<void>((resolve) => {
      const timer = this.#options.clock.setTimeout(resolve, STOP_GRACE_MS);
      void hangUps.then(() => {
        timer.cancel();
        resolve();
      });
    });
    this.#ua.dispose();
    await this.#layer.stop();
  }

  #onInvite(call: InboundCall): void {
    if (this.#stopping) return call.reject(503);
    const o = this.#options;
    let sandboxCall: SandboxCall | undefined;
    try {
      sandboxCall = new SandboxCall({
        call, clock: o.clock, host: o.host, ringMs: o.ringMs, maxCallMs: o.maxCallMs,
        behaviour: behaviourFor(call.request.uri, call.request.headers.get('To') ?? ''),
        openMedia: () => SandboxMedia.open({ clock: o.clock, ports: o.ports, host: o.host, announcement: o.announcement }),
        onEnded: (ended) => this.#calls.delete(ended),
        ...(o.logger ? { logger: o.logger } : {}),
      });
      this.#calls.add(sandboxCall);
      sandboxCall.begin();
    } catch (err) {
      // A bug here must not take the gateway's event loop down with it: the caller gets 500.
      o.logger?.error({ err, callId: call.callId }, 'sandbox far end failed on INVITE');
      if (sandboxCall) this.#calls.delete(sandboxCall);
      call.reject(500);
    }
  }
}

/** A port number the OS considers free for UDP on `host` right now. */
function ephemeralUdpPort(host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const socket = createSocket(host.includes(':') ? 'udp6' : 'udp4');
    socket.once('error', reject);
    socket.bind(0, host, () => {
      const { port } = socket.address();
      socket.close(() => resolve(port));
    });
  });
}

/**
 * Listens on UDP and TCP on the same port, so one host:port names the carrier whatever the
 * transport. Another process may take the port between the probe and the bind: then retry.
 */
async function listenOnOnePort(host: string, clock: Clock, delegate: TransportLayerDelegate): Promise<TransportLayer> {
  let lastError: unknown = new Error('no port');
  for (let attempt = 0; attempt < LISTEN_ATTEMPTS; attempt++) {
    const port = await ephemeralUdpPort(host);
    const layer = new TransportLayer({ listen: [{ protocol: 'UDP', host, port }, { protocol: 'TCP', host, port }], delegate, clock });
    try {
      await layer.start();
      return layer;
    } catch (err) {
      lastError = err;
    }
  }
  throw lastError;
}
