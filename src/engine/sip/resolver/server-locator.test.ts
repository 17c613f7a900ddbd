import t from 'tap';
import type { NaptrRecord, SrvRecord } from 'node:dns';
import { ServerLocator, orderSrv, type DnsLookup } from './server-locator.js';

/** Answers from a table; any name not in it fails like ENOTFOUND. Records each query. */
function fakeDns(zone: { naptr?: Record<string, NaptrRecord[]>; srv?: Record<string, SrvRecord[]>; a?: Record<string, string[]>; aaaa?: Record<string, string[]> }) {
  const queries: string[] = [];
  const answer = <T>(kind: string, table: Record<string, T[]> | undefined, name: string): Promise<T[]> => {
    queries.push(`${kind} ${name}`);
    const hit = table?.[name];
    return hit ? Promise.resolve(hit) : Promise.reject(Object.assign(new Error('not found'), { code: 'ENOTFOUND' }));
  };
  const dns: DnsLookup = {
    resolveNaptr: (n) => answer('NAPTR', zone.naptr, n),
    resolveSrv: (n) => answer('SRV', zone.srv, n),
    resolve4: (n) => answer('A', zone.a, n),
    resolve6: (n) => answer('AAAA', zone.aaaa, n),
  };
  return { dns, queries };
}

const naptr = (order: number, pref: number, service: string, replacement: string): NaptrRecord => ({ flags: 's', service, regexp: '', replacement, order, preference: pref });
const srv = (priority: number, weight: number, port: number, name: string): SrvRecord => ({ priority, weight, port, name });

t.test('RFC 3263 4.1/4.2: numeric host is used as is, no DNS', async (t) => {
  const { dns, queries } = fakeDns({});
  const locator = new ServerLocator({ dns });
  t.same(await locator.locate('sip:192.0.2.4'), [{ protocol: 'UDP', address: '192.0.2.4', port: 5060 }]);
  t.same(await locator.locate('sips:[2001:db8::1]:5071'), [{ protocol: 'TLS', address: '2001:db8::1', port: 5071 }]);
  t.same(await locator.locate('sip:192.0.2.4;transport=tcp'), [{ protocol: 'TCP', address: '192.0.2.4', port: 5060 }]);
  t.same(queries, []);
});

t.test('RFC 3263 4.2: explicit port means A/AAAA only', async (t) => {
  const { dns, queries } = fakeDns({ a: { 'pbx.example.com': ['192.0.2.10'] }, aaaa: { 'pbx.example.com': ['2001:db8::10'] } });
  const targets = await new ServerLocator({ dns }).locate('sip:alice@pbx.example.com:5080');
  t.same(targets.map((x) => [x.protocol, x.address, x.port]), [['UDP', '192.0.2.10', 5080], ['UDP', '2001:db8::10', 5080]]);
  t.notOk(queries.some((q) => q.startsWith('NAPTR') || q.startsWith('SRV')));
});

t.test('RFC 3263 4.1: NAPTR order and preference, then SRV, then addresses', async (t) => {
  const { dns } = fakeDns({
    naptr: { 'example.com': [
      naptr(50, 50, 'SIP+D2U', '_sip._udp.example.com'),
      naptr(50, 10, 'SIP+D2T', '_sip._tcp.example.com'),
      naptr(90, 50, 'SIPS+D2T', '_sips._tcp.example.com'),
      naptr(10, 10, 'SIP+D2S', '_sip._sctp.example.com'),
    ] },
    srv: {
      '_sip._tcp.example.com': [srv(0, 0, 5060, 'tcp1.example.com')],
      '_sip._udp.example.com': [srv(20, 0, 5060, 'udp2.example.com'), srv(10, 0, 5062, 'udp1.example.com')],
      '_sips._tcp.example.com': [srv(0, 0, 5061, 'tls.example.com')],
    },
    a: { 'tcp1.example.com': ['192.0.2.1'], 'udp1.example.com': ['192.0.2.2'], 'udp2.example.com': ['192.0.2.3'], 'tls.example.com': ['192.0.2.4'] },
  });
  const targets = await new ServerLocator({ dns }).locate('sip:bob@example.com');
  t.same(targets.map((x) => `${x.protocol} ${x.address}:${x.port}`), ['TCP 192.0.2.1:5060', 'UDP 192.0.2.2:5062', 'UDP 192.0.2.3:5060', 'TLS 192.0.2.4:5061'], 'SCTP (unsupported) skipped');
  t.ok(targets.every((x) => x.hostname === 'example.com'), 'TLS server name is the URI domain (RFC 5922)');
  const secure = await new ServerLocator({ dns }).locate('sips:bob@example.com');
  t.same(secure.map((x) => x.protocol), ['TLS'], 'SIPS uses SIPS+D2T only');
  const tcpOnly = await new ServerLocator({ dns, transports: ['TCP'] }).locate('sip:bob@example.com');
  t.same(tcpOnly.map((x) => x.protocol), ['TCP']);
});

t.test('RFC 3263 4.1: without NAPTR, SRV for each supported transport; without SRV, A/AAAA on 5060', async (t) => {
  const { dns } = fakeDns({
    srv: { '_sip._tcp.carrier.example': [srv(0, 0, 5070, 'sbc.carrier.example')] },
    a: { 'sbc.carrier.example': ['198.51.100.7'], 'plain.example': ['198.51.100.8'] },
  });
  const locator = new ServerLocator({ dns });
  t.same(await locator.locate('sip:carrier.example'), [{ protocol: 'TCP', address: '198.51.100.7', port: 5070, hostname: 'carrier.example' }]);
  t.same(await locator.locate('sip:plain.example'), [{ protocol: 'UDP', address: '198.51.100.8', port: 5060, hostname: 'plain.example' }]);
  t.same(await locator.locate('sips:plain.example'), [{ protocol: 'TLS', address: '198.51.100.8', port: 5061, hostname: 'plain.example' }]);
  t.same(await locator.locate('sip:nowhere.example'), [], 'NXDOMAIN: no targets, no throw');
});

t.test('RFC 3263 4.1: transport parameter selects the SRV service', async (t) => {
  const { dns, queries } = fakeDns({ srv: { '_sip._tcp.example.org': [srv(0, 0, 5090, 'e.example.org')] }, a: { 'e.example.org': ['192.0.2.50'] } });
  const targets = await new ServerLocator({ dns }).locate('sip:example.org;transport=tcp');
  t.same(targets.map((x) => [x.protocol, x.port]), [['TCP', 5090]]);
  t.notOk(queries.some((q) => q.startsWith('NAPTR')), 'no NAPTR when the transport is given');
  t.same(await new ServerLocator({ dns }).locate('sip:example.org;transport=sctp'), [], 'unsupported transport');
  t.same(await new ServerLocator({ dns }).locate('tel:+15551234'), [], 'tel URIs are not located');
});

t.test('RFC 2782: SRV priority ascending, weight-proportional within a priority', (t) => {
  const records = [srv(10, 0, 1, 'z'), srv(0, 10, 1, 'light'), srv(0, 90, 1, 'heavy')];
  t.same(orderSrv(records, () => 0.99).map((r) => r.name), ['heavy', 'light', 'z']);
  t.same(orderSrv(records, () => 0).map((r) => r.name), ['light', 'heavy', 'z']);
  t.end();
});
