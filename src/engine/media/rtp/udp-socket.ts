/** @module UDP sockets for media: bound to one port, sending to IP literals without DNS. */
import { createSocket, type Socket } from 'node:dgram';
import { isIPv4 } from 'node:net';

/**
 * Media peers are always IP literals from SDP, so the resolver can answer synchronously. Node's
 * default resolver defers every send by a tick through dns.lookup, measurable at 100,000
 * packets per second.
 */
function literalLookup(
  hostname: string,
  _options: unknown,
  callback: (err: NodeJS.ErrnoException | null, address: string, family: number) => void,
): void {
  if (isIPv4(hostname)) callback(null, hostname, 4);
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
