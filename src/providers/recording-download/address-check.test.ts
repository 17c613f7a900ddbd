import t from 'tap';
import { isRefusedAddress } from './address-check.js';

t.test('contract 7: IPv6 forms that embed a non-public IPv4 address are refused (RFC 6052, 3056, 4291, 6145)', (t) => {
  const refused = [
    '::ffff:10.0.0.1', '::ffff:a00:1', '::10.0.0.1', '::a00:1', '::ffff:0:a00:1', '::ffff:0:127.0.0.1',
    '64:ff9b::a00:1', '64:ff9b::169.254.169.254', '2002:a00:1::1', '2002:a9fe:a9fe::1', '2001:0:4136:e378::1', 'fec0::1',
    '127.0.0.1', '169.254.169.254', '::1', 'fe80::1%eth0', '[::1]', 'not-an-address',
  ];
  for (const a of refused) t.ok(isRefusedAddress(a), `${a} refused`);
  const allowed = ['8.8.8.8', '::ffff:8.8.8.8', '64:ff9b::808:808', '2002:808:808::1', '2606:4700:4700::1111', '2a00:1450:4001:81c::200e'];
  for (const a of allowed) t.notOk(isRefusedAddress(a), `${a} allowed`);
  t.end();
});
