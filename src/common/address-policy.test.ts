import t from 'tap';
import { isNonPublicAddress, isNonPublicHost } from './address-policy.js';

t.test('docs/API.md "Calls" and docs/WEBHOOKS.md "Post-call webhooks": loopback, private, link-local and metadata ranges are refused in every IPv4 and IPv6 form', (t) => {
  const refused = [
    '127.0.0.1', '127.8.9.10', '10.1.2.3', '172.16.0.1', '172.31.255.255', '192.168.1.1', '169.254.169.254', '100.64.0.1',
    '0.0.0.0', '224.0.0.1', '255.255.255.255', '::1', '::', 'fe80::1', 'fc00::1', 'fd12:3456::1', 'ff02::1',
    '::ffff:127.0.0.1', '::ffff:10.0.0.1', '::ffff:169.254.169.254', '::ffff:7f00:1', '0:0:0:0:0:ffff:a00:1', '[::1]', 'fe80::1%eth0',
    '::10.0.0.1', '::a00:1', '::ffff:a00:1', '::ffff:0:a00:1', '::ffff:0:127.0.0.1', '2002:a9fe:a9fe::1', '64:ff9b::a00:1', '64:ff9b::169.254.169.254', '2002:a00:1::1', '2002:7f00:1::', '2001:0:4136:e378::1', 'fec0::1',
  ];
  for (const a of refused) t.ok(isNonPublicAddress(a), `${a} is refused`);
  const allowed = ['8.8.8.8', '1.1.1.1', '172.32.0.1', '2606:4700:4700::1111', '::ffff:8.8.8.8', '64:ff9b::808:808', '2002:808:808::1', '2a00:1450:4001:81c::200e'];
  for (const a of allowed) t.notOk(isNonPublicAddress(a), `${a} is public`);
  t.ok(isNonPublicAddress('not-an-ip'), 'a non-address is refused, not guessed');
  t.end();
});

t.test('host pre-check: localhost names and literal private IPs, names left to resolution', (t) => {
  for (const h of ['localhost', 'LOCALHOST.', 'api.localhost', '127.0.0.1', '[::1]', '10.0.0.7']) t.ok(isNonPublicHost(h), h);
  for (const h of ['agent.example.com', '8.8.8.8', '[2606:4700::1]']) t.notOk(isNonPublicHost(h), h);
  t.end();
});
