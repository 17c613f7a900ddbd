/**
 * @module An outbound call's far end for answering-machine detection tests: a gateway with one
 * carrier toward a sipp callee whose side of the call is `clipFile` (raw µ-law 8 kHz) played with
 * rtp_stream once it answered, and a WebSocket agent to place the call to.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Test } from 'tap';
import { FakeCustomAgent } from './fake-agent-servers/custom-agent-server.js';
import { startTestGateway, type TestGateway } from './gateway-harness.js';
import { tempWorkdir } from './peers.js';
import { freeMediaPort, freePort, SCENARIOS, startSipp } from './sip-sipp.js';

export async function startClipCallee(t: Test, clipFile: string): Promise<{ gw: TestGateway; bot: FakeCustomAgent }> {
  const cwd = tempWorkdir(t);
  const [sipPort, mediaPort] = [await freePort(), await freeMediaPort()];
  const scenario = join(cwd, 'callee.xml');
  writeFileSync(scenario, readFileSync(join(SCENARIOS, 'calls-uas-amd-clip.xml'), 'utf8').replace('rtp_stream="CLIP,', `rtp_stream="${clipFile},`));
  const gw = await startTestGateway(t, {
    yaml: 'calls:\n  allow_private_agent_urls: true\n  ring_timeout_seconds: 5',
    carriers: `carriers:\n  - name: far\n    outbound:\n      uri: "sip:127.0.0.1:${sipPort};transport=udp"\n    codecs: [PCMU]\n    options_ping_s: 0\n`,
  });
  await gw.gateway.store.numbers.add(gw.tenantId, '+15550100', 'far');
  const bot = await FakeCustomAgent.start();
  t.teardown(() => bot.core.close());
  startSipp(t, cwd, ['-sf', scenario, '-i', '127.0.0.1', '-p', String(sipPort), '-mp', String(mediaPort), '-m', '1', '-timeout', '60s']);
  return { gw, bot };
}
