import t from 'tap';
import { readFileSync } from 'node:fs';
import { UdpTransport } from './udp-transport.js';

t.test('SIP over UDP (RFC 3261 18): the listening socket gets a receive buffer for bursts, up to what the kernel allows', async (t) => {
  const transport = new UdpTransport({ host: '127.0.0.1', port: 0, maxMessageSize: 65_535, delegate: { onMessage: () => undefined } });
  await transport.listen();
  t.teardown(() => transport.close());
  // Linux grants min(asked, net.core.rmem_max) and reports twice that; the default is far below.
  const rmemMax = Number(readFileSync('/proc/sys/net/core/rmem_max', 'utf8'));
  const rmemDefault = Number(readFileSync('/proc/sys/net/core/rmem_default', 'utf8'));
  t.equal(transport.receiveBufferBytes, 2 * Math.min(4 * 1024 * 1024, rmemMax), `granted ${transport.receiveBufferBytes} bytes (default ${2 * rmemDefault})`);
});
