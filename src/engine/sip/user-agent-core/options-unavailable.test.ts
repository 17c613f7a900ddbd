/**
 * @module OPTIONS to a draining user agent (RFC 3261 §11.2, docs/CLUSTER.md "Drain") over real
 * UDP on 127.0.0.1: 503 with Retry-After while `unavailableFor` names seconds, 200 otherwise.
 */
import t from 'tap';
import { startGatewayUaOnTestTransport } from '../../../../test/support/sip-sipp.js';
import { SipHeaders, SipRequest, type SipResponse } from '../messages/sip-message.js';
import type { SipUserAgent } from './sip-user-agent.js';
import { randomToken } from './user-agent-core.js';

/** `from` sends an out-of-dialog OPTIONS to `port` and resolves with the final response. */
function options(from: SipUserAgent, port: number): Promise<SipResponse> {
  const h = new SipHeaders();
  h.append('Max-Forwards', '70');
  h.append('From', `<sip:edge@127.0.0.1>;tag=${randomToken()}`);
  h.append('To', `<sip:127.0.0.1:${port}>`);
  h.append('Call-ID', randomToken(12));
  h.append('CSeq', '1 OPTIONS');
  return new Promise((resolve, reject) => from.sendRequest(new SipRequest('OPTIONS', `sip:127.0.0.1:${port}`, h), { address: '127.0.0.1', port, protocol: 'UDP' }, {
    onResponse: (r) => { if (r.status >= 200) resolve(r); }, onTimeout: () => reject(new Error('timeout')),
  }));
}

t.test('RFC 3261 11.2 / docs/CLUSTER.md "Drain": a draining UA answers OPTIONS 503 with Retry-After (what an INVITE gets), then 200 again once in service', async (t) => {
  let draining: number | undefined = 30;
  const { transport } = await startGatewayUaOnTestTransport(t, { unavailableFor: () => draining });
  const { ua: prober } = await startGatewayUaOnTestTransport(t);
  const refused = await options(prober, transport.udpPort);
  t.equal(refused.status, 503);
  t.equal(refused.headers.get('Retry-After'), '30');
  draining = undefined;
  const ok = await options(prober, transport.udpPort);
  t.equal(ok.status, 200);
  t.match(ok.headers.get('Allow') ?? '', /INVITE/);
});
