import t from 'tap';
import { readFileSync } from 'node:fs';
import { isAddressOrCidr, loadCarriers, parseCarriers, sdesExposure } from './carriers.js';

t.test('docs/CONFIGURATION.md "Operator surface": the example carriers file is valid and fully defaulted', (t) => {
  const carriers = loadCarriers(new URL('../../sbc-config/carriers.example.yaml', import.meta.url).pathname);
  t.same(carriers.map((c) => c.name), ['telnyx', 'pbx-lab']);
  const lab = carriers[1]!;
  t.equal(lab.transfer, 'bridge', 'default transfer');
  t.equal(lab.outbound?.from_format, 'e164', 'default From format');
  t.equal(lab.inbound?.did_from, 'request_uri');
  t.equal(lab.max_concurrent_calls, 1000);
  t.equal(lab.media_encryption, 'disabled', 'plain RTP by default');
  t.equal(carriers[0]!.media_encryption, 'required');
  t.equal(lab.calls.trust_asserted_identity, false, 'RFC 3325: P-Asserted-Identity is not believed by default');
  t.equal(carriers[0]!.calls.trust_asserted_identity, true);
  t.equal(lab.caller_id_policy, 'owned', 'docs/API.md "Caller IDs": owned numbers by default');
  t.throws(() => parseCarriers('carriers:\n  - name: acme\n    caller_id_policy: mine\n', 'c.yaml'), { message: /carrier "acme": carriers\.0\.caller_id_policy must be one of/ });
  t.ok(readFileSync(new URL('../../sbc-config/carriers.example.yaml', import.meta.url), 'utf8').includes('sandbox'));
  t.same(loadCarriers(undefined), [], 'no file, no carriers');
  t.end();
});

t.test('docs/CONFIGURATION.md "Operator surface": mistakes name the carrier and the key', (t) => {
  t.throws(() => parseCarriers('carriers:\n  - name: acme\n    transfer: forward\n', 'c.yaml'), { message: /carrier "acme": carriers\.0\.transfer must be one of "bridge", "refer" \(in c\.yaml\)/ });
  t.throws(() => parseCarriers('carriers:\n  - name: acme\n    inbound: { sources: [10.0.0.300] }\n', 'c.yaml'), { message: /carrier "acme": inbound\.sources has "10\.0\.0\.300"/ });
  t.throws(() => parseCarriers('carriers:\n  - name: acme\n    outbound: { uri: gw.example.net }\n', 'c.yaml'), { message: /outbound\.uri must match pattern/ });
  t.throws(() => parseCarriers('carriers:\n  - name: acme\n  - name: acme\n', 'c.yaml'), { message: /"acme" appears twice/ });
  t.throws(() => parseCarriers('carriers:\n  - name: sandbox\n', 'c.yaml'), { message: /built in/ });
  t.throws(() => parseCarriers('carriers:\n  - name: acme\n    outbound: { uri: "sip:gw", from_format: national }\n', 'c.yaml'), { message: /country_code is required/ });
  t.throws(() => parseCarriers('carriers: [', 'c.yaml'), { message: /not valid YAML/ });
  t.throws(() => parseCarriers('carriers:\n  - name: acme\n    colour: red\n', 'c.yaml'), { message: /colour is not a known field/ });
  t.end();
});

t.test('SECURITY.md "Media sources": media_networks is an optional list of addresses and CIDRs', (t) => {
  const parsed = parseCarriers('carriers:\n  - name: acme\n    media_networks: [192.0.2.0/24, 198.51.100.7]\n', 'c.yaml')[0]!;
  t.same(parsed.media_networks, ['192.0.2.0/24', '198.51.100.7']);
  t.equal(parseCarriers('carriers:\n  - name: acme\n', 'c.yaml')[0]!.media_networks, undefined, 'absent: only the hosts the SDP names');
  t.throws(() => parseCarriers('carriers:\n  - name: acme\n    media_networks: [media.example.net]\n', 'c.yaml'), { message: /carrier "acme": media_networks has "media\.example\.net", which is not an IP address or CIDR/ });
  t.end();
});

t.test('addresses and CIDRs of both families', (t) => {
  for (const ok of ['203.0.113.7', '203.0.113.0/24', '0.0.0.0/0', '2001:db8::1', '2001:db8::/32']) t.ok(isAddressOrCidr(ok), ok);
  for (const bad of ['203.0.113.0/33', '2001:db8::/129', 'gw.example.net', '10.0.0.1/', '10.0.0.1/8/8', '']) t.notOk(isAddressOrCidr(bad), bad);
  t.end();
});

t.test('RFC 4568 8.3: SDES keys are only private over TLS signalling; the start says which carriers expose them', (t) => {
  const carrier = (yaml: string) => parseCarriers(`carriers:\n  - name: acme\n${yaml}`, 'c.yaml')[0]!;
  t.equal(carrier('    outbound: { uri: "sip:gw.example.net" }\n').media_encryption, 'disabled', 'plain RTP unless asked');
  const table: [string, string, boolean, RegExp | null][] = [
    ['disabled never exposes keys', '    outbound: { uri: "sip:gw.example.net" }\n', false, null],
    ['a UDP outbound URI', '    media_encryption: required\n    outbound: { uri: "sip:gw.example.net" }\n', true, /outbound\.uri/],
    ['a transport=tls URI', '    media_encryption: required\n    outbound: { uri: "sip:gw.example.net;transport=tls" }\n', true, null],
    ['a sips: URI', '    media_encryption: allowed\n    outbound: { uri: "sips:gw.example.net" }\n', true, null],
    ['inbound without a TLS listener', '    media_encryption: allowed\n    inbound: { sources: [192.0.2.1] }\n', false, /no sip\.tls listener/],
    ['inbound with one', '    media_encryption: allowed\n    inbound: { sources: [192.0.2.1] }\n', true, null],
  ];
  for (const [name, yaml, tls, exposed] of table) {
    const found = sdesExposure(carrier(yaml), tls);
    if (exposed === null) t.equal(found, null, name);
    else t.match(found, exposed, name);
  }
  t.throws(() => parseCarriers('carriers:\n  - name: acme\n    media_encryption: dtls\n', 'c.yaml'), { message: /media_encryption must be one of "disabled", "allowed", "required"/ });
  t.end();
});
