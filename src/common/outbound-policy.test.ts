import t from 'tap';
import { checkedLookup, OutboundAddressPolicy, pinHost, pinnedLookup, resolveChecked, type HostResolver } from './outbound-policy.js';

const resolver = (table: Record<string, string[]>): HostResolver => (host) =>
  table[host] ? Promise.resolve(table[host].map((address) => ({ address, family: address.includes(':') ? 6 : 4 }))) : Promise.reject(Object.assign(new Error('ENOTFOUND'), { code: 'ENOTFOUND' }));

t.test('SECURITY.md "Outbound addresses": public allowed, non-public only by the operator\'s switch or listed networks', (t) => {
  const strict = new OutboundAddressPolicy({ allowPrivate: false });
  for (const a of ['127.0.0.1', '[::1]', '169.254.169.254', '10.1.2.3', '::ffff:10.1.2.3']) t.notOk(strict.permits(a), a);
  t.ok(strict.permits('93.184.215.14'));
  t.ok(new OutboundAddressPolicy({ allowPrivate: true }).permits('169.254.169.254'), 'the development switch allows everything');
  const listed = new OutboundAddressPolicy({ allowPrivate: false, allowedPrivateNetworks: ['10.20.0.0/16', '127.0.0.1', 'fd00::/8'] });
  for (const a of ['10.20.3.4', '127.0.0.1', 'fd12::1']) t.ok(listed.permits(a), `listed: ${a}`);
  for (const a of ['10.21.0.1', '127.0.0.2', '169.254.169.254']) t.notOk(listed.permits(a), `not listed: ${a}`);
  t.ok(strict.refusesHostText('localhost') && strict.refusesHostText('[::1]') && !strict.refusesHostText('agent.example.com'));
  t.notOk(new OutboundAddressPolicy({ allowPrivate: false, allowedPrivateNetworks: ['127.0.0.0/8', '::1'] }).refusesHostText('localhost'), 'localhost with loopback listed');
  t.throws(() => new OutboundAddressPolicy({ allowPrivate: false, allowedPrivateNetworks: ['pbx.internal'] }));
  t.end();
});

t.test('decisions kept for addresses checked again are the decisions themselves, past the number kept too', (t) => {
  const listed = new OutboundAddressPolicy({ allowPrivate: false, allowedPrivateNetworks: ['10.20.0.0/16'] });
  // 3,000 addresses (more than are kept), each private one in or out of the listed network, twice over.
  const addresses = Array.from({ length: 3_000 }, (_, i) => (i % 3 === 0 ? `93.184.${i >> 8}.${i & 255}` : i % 3 === 1 ? `10.20.${i >> 8}.${i & 255}` : `10.21.${i >> 8}.${i & 255}`));
  const expected = addresses.map((a) => !a.startsWith('10.21.'));
  for (const round of [1, 2]) t.same(addresses.map((a) => listed.permits(a)), expected, `round ${round}`);
  t.notOk(listed.permits('[::ffff:10.21.0.1]') || listed.permits('::ffff:10.21.0.1'), 'a mapped form is decided on its own');
  t.end();
});

t.test('every answer is checked: one refused answer refuses the name; no answer is "unresolved"', async (t) => {
  const policy = new OutboundAddressPolicy({ allowPrivate: false });
  const dns = resolver({ 'ok.test': ['93.184.215.14', '2606:2800:21f:cb07:6820:80da:af6b:8b2c'], 'mixed.test': ['93.184.215.14', '169.254.169.254'] });
  t.same(await resolveChecked('ok.test', policy, dns), { ok: true, address: '93.184.215.14', family: 4 });
  t.match(await resolveChecked('mixed.test', policy, dns), { ok: false, reason: 'refused', detail: /169\.254\.169\.254/ });
  t.match(await resolveChecked('gone.test', policy, dns), { ok: false, reason: 'unresolved' });
  t.match(await resolveChecked('[::1]', policy, dns), { ok: false, reason: 'refused' });
});

t.test('checkedLookup: answers only checked addresses, the pinned host without a second lookup', async (t) => {
  const policy = new OutboundAddressPolicy({ allowPrivate: false });
  const asked: string[] = [];
  const dns: HostResolver = (host) => { asked.push(host); return resolver({ 'inside.test': ['10.0.0.5'], 'ok.test': ['93.184.215.14'] })(host); };
  const lookup = checkedLookup(policy, dns, { host: 'agent.test', address: '93.184.215.15', family: 4 });
  const ask = (host: string) => new Promise<{ err: NodeJS.ErrnoException | null; address: unknown }>((resolve) => lookup(host, {}, (err, address) => resolve({ err, address })));
  t.same(await ask('agent.test'), { err: null, address: '93.184.215.15' }, 'pinned');
  t.same(await ask('ok.test'), { err: null, address: '93.184.215.14' });
  t.match((await ask('inside.test')).err, { name: 'OutboundAddressError', code: 'EADDRREFUSED' });
  t.same(asked, ['ok.test', 'inside.test'], 'the pinned host was not resolved again');
});

t.test('pinnedLookup: every name gets the checked address, in both callback forms (docs/SECURITY.md "Outbound addresses")', async (t) => {
  const lookup = pinnedLookup('2001:db8::7', 6);
  const one = await new Promise<unknown[]>((resolve) => lookup('media.example.test', {}, (...args) => resolve(args)));
  t.same(one, [null, '2001:db8::7', 6]);
  const all = await new Promise<unknown[]>((resolve) => lookup('other.example.test', { all: true }, (...args) => resolve(args)));
  t.same(all, [null, [{ address: '2001:db8::7', family: 6 }]]);
});

t.test('a refusal says which address was refused, or which resolver code left the name unresolved', async (t) => {
  const policy = new OutboundAddressPolicy({ allowPrivate: false });
  const dns = resolver({ 'mixed.test': ['93.184.215.14', '10.0.0.5'] });
  t.match(await resolveChecked('mixed.test', policy, dns), { ok: false, reason: 'refused', address: '10.0.0.5' });
  t.match(await resolveChecked('localhost', policy, dns), { ok: false, reason: 'refused', address: 'localhost' });
  t.match(await resolveChecked('gone.test', policy, dns), { ok: false, reason: 'unresolved', code: 'ENOTFOUND' });
  const excepted = new OutboundAddressPolicy({ allowPrivate: false, allowAddress: (a) => a === '10.0.0.5' });
  t.same(await resolveChecked('[10.0.0.5]', excepted, dns), { ok: true, address: '10.0.0.5', family: 4 }, 'the per-address exception');
  t.notOk(excepted.permits('10.0.0.6'));
});

t.test('pinHost: one resolution, then the host is answered with the checked address and other names are checked', async (t) => {
  const policy = new OutboundAddressPolicy({ allowPrivate: false });
  const asked: string[] = [];
  const dns: HostResolver = (host) => { asked.push(host); return resolver({ 'agent.test': ['93.184.215.15'], 'inside.test': ['10.0.0.5'] })(host); };
  const pinned = await pinHost('agent.test', policy, dns);
  if (!pinned.ok) return t.fail(pinned.detail);
  const ask = (host: string) => new Promise<{ err: NodeJS.ErrnoException | null; address: unknown }>((resolve) => pinned.lookup(host, {}, (err, address) => resolve({ err, address })));
  t.same(await ask('agent.test'), { err: null, address: '93.184.215.15' });
  t.match((await ask('inside.test')).err, { code: 'EADDRREFUSED' });
  t.same(asked, ['agent.test', 'inside.test'], 'the pinned host was resolved once');
  t.match(await pinHost('[::1]', policy, dns), { ok: false, reason: 'refused' });
});
