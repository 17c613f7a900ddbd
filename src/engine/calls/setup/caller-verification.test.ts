/**
 * @module The carrier's STIR/SHAKEN report on an inbound call (docs/API.md "Caller verification"):
 * `verstat` (3GPP TS 24.229 §7.2A.20) in P-Asserted-Identity or From, and whether an RFC 8224
 * Identity header came, read from real INVITEs and carried to the record and to the agent.
 */
import t from 'tap';
import { parseMessage, type SipRequest } from '../../sip/index.js';
import { callRig, dialGateway, onlyCall, recordOf, until } from '../../../../test/support/call-engine-rig.js';
import { callerIdentity, verstatOf } from './caller-identity.js';

const CARRIER = { numberFormat: 'e164', trustAssertedIdentity: false } as const;

function invite(...headers: string[]): SipRequest {
  const text = ['INVITE sip:+15550100@127.0.0.1 SIP/2.0', 'Via: SIP/2.0/UDP 127.0.0.1:5080;branch=z9hG4bK1', 'Max-Forwards: 70',
    'To: <sip:+15550100@127.0.0.1>', 'Call-ID: verstat-1', 'CSeq: 1 INVITE', 'Contact: <sip:127.0.0.1:5080>', ...headers, 'Content-Length: 0', '', ''].join('\r\n');
  const parsed = parseMessage(Buffer.from(text));
  if (!parsed.ok) throw parsed.error;
  return parsed.message as SipRequest;
}

t.test('3GPP TS 24.229 7.2A.20: verstat is read from P-Asserted-Identity first, in the user part or the URI parameters, else from From', (t) => {
  const from = 'From: <sip:+15557770020@127.0.0.1>;tag=a';
  t.equal(verstatOf(invite(from, 'P-Asserted-Identity: <sip:+15557770020;verstat=TN-Validation-Passed@127.0.0.1;user=phone>')), 'TN-Validation-Passed');
  t.equal(verstatOf(invite(from, 'P-Asserted-Identity: <sip:+15557770020@127.0.0.1;user=phone;verstat=No-TN-Validation>')), 'No-TN-Validation');
  t.equal(verstatOf(invite('From: <tel:+15557770020;verstat=TN-Validation-Failed>;tag=a')), 'TN-Validation-Failed', 'a tel URI in From');
  t.equal(verstatOf(invite('From: <sip:+15557770020@127.0.0.1>;tag=verstat')), null, 'a header parameter is not the URI parameter');
  t.equal(verstatOf(invite(from)), null, 'none reported');
  t.end();
});

t.test('RFC 8224 4: whether an Identity header came is recorded, whatever its content', (t) => {
  const from = 'From: <sip:+15557770020@127.0.0.1>;tag=a';
  t.same(callerIdentity(invite(from, 'Identity: eyJhbGciOiJFUzI1NiJ9.e30.c2ln;info=<https://cert.example/x.pem>;alg=ES256;ppt=shaken'), CARRIER).verification,
    { verstat: null, identityHeader: true });
  t.same(callerIdentity(invite(from), CARRIER).verification, { verstat: null, identityHeader: false });
  t.end();
});

t.test('docs/API.md "Caller verification": an inbound call records the report and hands it to its agent', async (t) => {
  const rig = await callRig(t);
  const dial = dialGateway(rig, {
    headers: [['P-Asserted-Identity', '<sip:+15550123;verstat=TN-Validation-Passed@127.0.0.1;user=phone>'], ['Identity', 'eyJhbGciOiJFUzI1NiJ9.e30.c2ln;ppt=shaken']],
  });
  await until(() => dial.final !== null, 'the final response');
  const id = await onlyCall(rig);
  t.match(recordOf(rig, id), { caller_verstat: 'TN-Validation-Passed', caller_identity_header: true });
  await until(() => rig.agents.links[0]?.started === true, 'the agent to connect');
  t.same(rig.agents.links[0]!.request.call.verification, { verstat: 'TN-Validation-Passed', identityHeader: true });
});
