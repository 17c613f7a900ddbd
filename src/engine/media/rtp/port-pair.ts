/**
 * @module Binding an RTP/RTCP port pair from the {@link PortPool}: the even port for RTP and the
 * odd one above it for RTCP (RFC 3550 §11), or the RTP port alone for rtcp-mux only, skipping pairs
 * another process holds. Apart from rtp-session.ts, which is what runs on a pair once bound.
 */
import { openMediaSocket, type MediaSocket } from './media-socket.js';
import { isPortsExhausted, type PortPool, type PortsExhausted } from './port-pool.js';

/** Pairs tried before giving up: ports other processes hold are skipped, not waited for. */
const BIND_ATTEMPTS = 16;

/**
 * Binds a pair on `bindAddress` and hands it to `use`. A pair that fails to bind, or that `use`
 * throws on, is closed and its port returned to the pool; the next pair is tried.
 */
export async function bindPortPair<T>(
  ports: PortPool,
  bindAddress: string,
  options: { muxOnly?: boolean | undefined },
  use: (rtp: MediaSocket, rtcp: MediaSocket | null, port: number) => T,
): Promise<T | PortsExhausted> {
  for (let attempt = 0; attempt < BIND_ATTEMPTS; attempt++) {
    const port = ports.allocate();
    if (isPortsExhausted(port)) return port;
    let rtp: MediaSocket | null = null;
    try {
      rtp = await openMediaSocket(bindAddress, port);
      const rtcp = options.muxOnly ? null : await openMediaSocket(bindAddress, port + 1);
      return use(rtp, rtcp, port);
    } catch {
      rtp?.close();
      ports.release(port);
    }
  }
  return { error: 'ports-exhausted' };
}
