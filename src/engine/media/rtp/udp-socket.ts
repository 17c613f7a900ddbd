/** @module UDP sockets for media: bound to one port, sending to IP literals without DNS. */
import { createSocket, type Socket } from 'node:dgram';

/**
 * Media peers are always IP literals from SDP or from a packet's source, so the resolver answers
 * synchronously. Node's default resolver defers every send by a tick through dns.lookup, which
 * shows at tens of thousands of packets per second. No regex either: a malformed address fails
 * in the native layer as a socket error.
 */
function literalLookup(
  hostname: string,
  _options: unknown,
  callback: (err: NodeJS.ErrnoException | null, address: string, family: number) => void,
): void {
  const first = hostname.charCodeAt(0);
  if (first >= 48 && first <= 57) callback(null, hostname, 4);
  else callback(Object.assign(new Error(`not an IPv4 literal: ${hostname}`), { code: 'EINVAL' }), '', 4);
}

/** Binds a UDP socket to `address:port` (0 for any port); rejects with the socket error (EADDRINUSE). */
export function bindUdp(address: string, port: number): Promise<Socket> {
  const socket = createSocket({ type: 'udp4', lookup: literalLookup });
  return new Promise((resolve, reject) => {
    const onError = (err: Error): void => {
      socket.close();
      reject(err);
    };
    socket.once('error', onError);
    socket.bind({ address, port, exclusive: true }, () => {
      socket.off('error', onError);
      resolve(socket);
    });
  });
}
