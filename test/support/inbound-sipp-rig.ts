/**
 * @module Inbound calls against sipp: a gateway whose carrier `trunk` takes calls from 127.0.0.1,
 * a sipp agent edge (a sip_trunk agent imported with a digest credential and a DID), and a sipp
 * carrier that calls that DID. Also what the tests read back: sipp's message logs, call details.
 */
import { readdirSync, readFileSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import type { Test } from 'tap';
import { FakeElevenLabs } from './fake-agent-servers/elevenlabs-server.js';
import { startTestGateway, waitFor, type ApiBody, type TestGateway } from './gateway-harness.js';
import { tempWorkdir } from './peers.js';
import { freeMediaPort, freePort, SCENARIOS, startSipp, type SippRun } from './sip-sipp.js';

/** The edge's credential, as inbound-edge-*.xml check it. */
export const EDGE_USER = 'gw-trunk';
export const EDGE_PASSWORD = 's3cret-pass';

/** One sipp peer: its run, folder (message log) and SIP port. */
export interface SippPeer {
  run: SippRun;
  cwd: string;
  port: number;
}

export interface InboundRig {
  gw: TestGateway;
  did: string;
  edge: SippPeer;
  /** The transfer target at the carrier's outbound URI, when asked for. */
  target: SippPeer | null;
  /** Starts the carrier's sipp calling the DID with `scenario` (a file in test/interop/scenarios). */
  call(scenario: string, extra?: string[]): Promise<SippPeer>;
}

/** Starts sipp in its own folder (with `pcap` linked to the Debian captures) on a free SIP and media port. */
export async function sippPeer(t: Test, args: string[]): Promise<SippPeer> {
  const cwd = tempWorkdir(t);
  symlinkSync('/usr/share/sip-tester', join(cwd, 'pcap'));
  const [port, media] = [await freePort(), await freeMediaPort()];
  const run = startSipp(t, cwd, [...args, '-i', '127.0.0.1', '-p', String(port), '-mp', String(media), '-trace_msg', '-m', '1', '-timeout', '30s', '-timeout_error']);
  return { run, cwd, port };
}

const scenario = (name: string): string[] => (name === 'uas' ? ['-sn', 'uas'] : ['-sf', join(SCENARIOS, name)]);

/**
 * The gateway, the edge sipp running `edgeScenario` with `-rtp_echo` (the agent says back what it
 * hears) and the imported sip_trunk agent routed from the DID. With `transferTarget`, the
 * carrier's outbound URI is a sipp `uas` with `-rtp_echo` that answers transfers.
 */
export async function startInboundRig(t: Test, options: {
  edgeScenario: string; edgeArgs?: string[]; transferTarget?: boolean; carrierCodecs?: string[]; mediaEncryption?: 'allowed' | 'required';
  /** The carrier's `calls.trust_asserted_identity` (RFC 3325 trust). */
  trustAssertedIdentity?: boolean;
  /** The carrier's `dtmf` (docs/CONFIGURATION.md "Digits toward the callee"). */
  carrierDtmf?: 'auto' | 'info';
  /** The agent's `transfer_policy` (docs/API.md "Transfers asked by the agent"). */
  transferPolicy?: { allow: string[]; max_per_call: number };
  /** The carrier's `transfer` (docs/CONFIGURATION.md): `refer` asks the carrier to transfer. */
  carrierTransfer?: 'bridge' | 'refer';
  /** The carrier's `calls.carry_headers` (docs/API.md "SIP headers carried through"); the default when absent. */
  carryHeaders?: string[];
}): Promise<InboundRig> {
  const edge = await sippPeer(t, [...scenario(options.edgeScenario), '-rtp_echo', ...(options.edgeArgs ?? [])]);
  const target = options.transferTarget ? await sippPeer(t, [...scenario('uas'), '-rtp_echo']) : null;
  const outbound = target ? `\n    outbound:\n      uri: "sip:127.0.0.1:${target.port};transport=udp"\n    options_ping_s: 0` : '';
  const codecs = `${options.carrierCodecs ? `\n    codecs: [${options.carrierCodecs.join(', ')}]` : ''}${options.mediaEncryption ? `\n    media_encryption: ${options.mediaEncryption}` : ''}${callsBlock(options)}${options.carrierDtmf ? `\n    dtmf: ${options.carrierDtmf}` : ''}${options.carrierTransfer ? `\n    transfer: ${options.carrierTransfer}` : ''}`;
  const gw = await startTestGateway(t, {
    carriers: `carriers:\n  - name: trunk\n    inbound:\n      sources: ['127.0.0.1']${codecs}${outbound}\n`,
    yaml: 'calls:\n  allow_private_agent_urls: true\n  allow_private_sip_targets: true\n  ring_timeout_seconds: 10',
  });
  const did = '+15550120';
  const credential = await gw.api('POST', '/v1/sip-credentials', { username: EDGE_USER, password: EDGE_PASSWORD }, { key: gw.liveKey });
  if (credential.status !== 201 && credential.status !== 200) throw new Error(`credential: ${JSON.stringify(credential.body)}`);
  await gw.gateway.store.numbers.add(gw.tenantId, did, 'trunk');
  const imported = await gw.api('POST', '/v1/agents/import', {
    provider: 'custom', external_agent_id: 'edge-bot', connection_mode: 'sip_trunk', sip_uri: `sip:${did}@127.0.0.1:${edge.port}`,
    sip_transport: 'udp', sip_credential_id: credential.body.id, did_number: did,
    ...(options.transferPolicy ? { transfer_policy: options.transferPolicy } : {}),
  }, { key: gw.liveKey });
  if (imported.status !== 200) throw new Error(`import: ${JSON.stringify(imported.body)}`);
  return {
    gw, did, edge, target,
    call: (name, extra = []) => startCarrier(t, gw, did, name, extra),
  };
}

/** The carrier's `calls:` block of the rig's options, or nothing. */
function callsBlock(options: { trustAssertedIdentity?: boolean; carryHeaders?: string[] }): string {
  const lines = [
    ...(options.trustAssertedIdentity ? ['      trust_asserted_identity: true'] : []),
    ...(options.carryHeaders ? [`      carry_headers: [${options.carryHeaders.map((h) => JSON.stringify(h)).join(', ')}]`] : []),
  ];
  return lines.length > 0 ? `\n    calls:\n${lines.join('\n')}` : '';
}

/** The carrier: sipp calling `did` at the gateway with `name` (a file in test/interop/scenarios). */
export function startCarrier(t: Test, gw: TestGateway, did: string, name: string, extra: string[] = []): Promise<SippPeer> {
  return sippPeer(t, [`127.0.0.1:${gw.gateway.sip.udpPort}`, ...scenario(name), '-s', did, ...extra]);
}

/** sipp's message log (`-trace_msg`): every SIP message it sent and received. */
export function sippMessages(peer: SippPeer): string {
  const log = readdirSync(peer.cwd).find((n) => n.endsWith('_messages.log'));
  return log ? readFileSync(join(peer.cwd, log), 'utf8') : '';
}

/** The responses to `method` in a sipp log whose status is `status`, each as its full text with LF line ends. */
export function responsesIn(log: string, status: number, method = 'INVITE'): string[] {
  return log.replace(/\r/g, '').split(/\n(?=-{10,})/)
    .filter((block) => new RegExp(`^SIP/2\\.0 ${status} `, 'm').test(block) && new RegExp(`^CSeq:\\s*\\d+ ${method}$`, 'm').test(block));
}

/** The `method` requests in a sipp log, each as its full text (retransmissions included). */
export function requestsIn(log: string, method: string): string[] {
  return log.split(/\n(?=-{10,})/).filter((block) => new RegExp(`^${method} \\S+ SIP/2\\.0`, 'm').test(block));
}

/** The first call to `did` in the tenant's list of inbound calls, live or ended. */
export async function inboundCall(gw: TestGateway, did: string): Promise<ApiBody> {
  return waitFor(`inbound call to ${did}`, async () => {
    for (const query of ['direction=inbound', 'direction=inbound&state=ended']) {
      const r = await gw.api('GET', `/v1/calls?${query}`, undefined, { key: gw.liveKey });
      const found = r.body.data.find((c) => c.to === did);
      if (found) return found;
    }
    return undefined;
  }, 20_000);
}

/** The call's detail once `check` holds on it. */
export async function detailWhen(gw: TestGateway, id: string, what: string, check: (d: ApiBody) => boolean): Promise<ApiBody> {
  return waitFor(`call ${id}: ${what}`, async () => {
    const r = await gw.api('GET', `/v1/calls/${id}`, undefined, { key: gw.liveKey });
    return check(r.body) ? r.body : undefined;
  }, 20_000);
}

/** The call's detail once it has ended. */
export async function ended(gw: TestGateway, id: string): Promise<ApiBody> {
  return detailWhen(gw, id, 'ended', (d) => d.state === 'ended');
}

/** sipp ended with every call successful (exit 0); its stderr and message log otherwise. */
export async function sippPassed(t: Test, peer: SippPeer, what: string): Promise<void> {
  const done = await peer.run.done;
  t.equal(done.code, 0, `${what} completed its scenario${done.code === 0 ? '' : `: ${done.stderr.slice(0, 300)}`}`);
  // What sipp sent and received, to tell a lost message from a wrong one.
  if (done.code !== 0) t.comment(sippMessages(peer).slice(-4000));
}

/** RMS of each channel of a 16-bit stereo WAV (44-byte header). */
export function channelRms(wav: Buffer): [number, number] {
  const sums = [0, 0];
  const frames = Math.floor((wav.length - 44) / 4);
  for (let i = 0; i < frames; i++) {
    for (const c of [0, 1]) sums[c]! += wav.readInt16LE(44 + 4 * i + 2 * c) ** 2;
  }
  return [Math.sqrt(sums[0]! / Math.max(frames, 1)), Math.sqrt(sums[1]! / Math.max(frames, 1))];
}

/** RMS of the loudest 100 ms of 16-bit LE mono PCM at 16 kHz (speech has pauses). */
export function pcmRms(pcm: Buffer): number {
  const block = 1600;
  let best = 0;
  for (let start = 0; start + block <= pcm.length / 2; start += block) {
    let sum = 0;
    for (let i = start; i < start + block; i++) sum += pcm.readInt16LE(2 * i) ** 2;
    best = Math.max(best, Math.sqrt(sum / block));
  }
  return best;
}

/**
 * A gateway whose carrier `trunk` takes calls from 127.0.0.1, with `did` routed to a fake
 * ElevenLabs agent imported as media_bridge (a public agent: no key, so the documented URL needs
 * no signature), exchanging 16-bit PCM at 16 kHz both ways.
 */
export async function startMediaBridgeRig(t: Test, did: string): Promise<{ gw: TestGateway; fake: FakeElevenLabs }> {
  const fake = await FakeElevenLabs.start({ userInputAudioFormat: 'pcm_16000', agentOutputAudioFormat: 'pcm_16000' });
  t.teardown(() => fake.core.close());
  const port = new URL(fake.url).port;
  const gw = await startTestGateway(t, {
    carriers: "carriers:\n  - name: trunk\n    inbound:\n      sources: ['127.0.0.1']\n",
    yaml: `calls:\n  allow_private_agent_urls: true\n  allow_private_sip_targets: true\nproviders:\n  elevenlabs:\n    api_base_url: http://127.0.0.1:${port}\n    ws_base_url: ws://127.0.0.1:${port}`,
  });
  await gw.gateway.store.numbers.add(gw.tenantId, did, 'trunk');
  const imported = await gw.api('POST', '/v1/agents/import', { provider: 'elevenlabs', external_agent_id: fake.externalAgentId, connection_mode: 'media_bridge', did_number: did }, { key: gw.liveKey });
  if (imported.status !== 200) throw new Error(`import: ${JSON.stringify(imported.body)}`);
  return { gw, fake };
}
