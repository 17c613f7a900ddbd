/**
 * @module The calls benchmark's far ends: sipp UAS instances acting as carriers. `echo` ones run
 * sipp's built-in `uas` with `-rtp_echo` (answer at once with PCMU, echo every RTP packet to its
 * sender); `ring` ones answer every INVITE with 180 and wait, so a call stays live in `ringing`
 * until the gateway cancels it (RFC 3261 9.2: 200 to the CANCEL, then 487 to the INVITE).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** A UAS that rings until cancelled. The 487 carries the INVITE's CSeq, saved when it arrived. */
const RING_SCENARIO = `<?xml version="1.0" encoding="ISO-8859-1" ?>
<scenario name="ring until cancelled">
  <recv request="INVITE" crlf="true">
    <action><ereg regexp=".*" search_in="hdr" header="CSeq:" check_it="true" assign_to="invite_cseq"/></action>
  </recv>
  <send><![CDATA[

      SIP/2.0 180 Ringing
      [last_Via:]
      [last_From:]
      [last_To:];tag=[pid]SIPpTag01[call_number]
      [last_Call-ID:]
      [last_CSeq:]
      Contact: <sip:[local_ip]:[local_port];transport=[transport]>
      Content-Length: 0

    ]]></send>
  <recv request="CANCEL"/>
  <send><![CDATA[

      SIP/2.0 200 OK
      [last_Via:]
      [last_From:]
      [last_To:];tag=[pid]SIPpTag01[call_number]
      [last_Call-ID:]
      [last_CSeq:]
      Content-Length: 0

    ]]></send>
  <send><![CDATA[

      SIP/2.0 487 Request Terminated
      [last_Via:]
      [last_From:]
      [last_To:];tag=[pid]SIPpTag01[call_number]
      [last_Call-ID:]
      CSeq:[$invite_cseq]
      Content-Length: 0

    ]]></send>
  <recv request="ACK"/>
</scenario>
`;

export type FarEndKind = 'echo' | 'ring';

export interface FarEnd {
  kind: FarEndKind;
  /** Carrier name in the gateway's carriers file. */
  carrier: string;
  sipPort: number;
  child: ChildProcess;
  /** What sipp wrote on stderr (its errors). */
  errors(): string;
}

const started: ChildProcess[] = [];

/** Starts one sipp UAS in `cwd` (sipp writes its files there). */
export function startFarEnd(kind: FarEndKind, carrier: string, cwd: string, sipPort: number, mediaPort: number): FarEnd {
  const common = ['-i', '127.0.0.1', '-p', String(sipPort), '-mp', String(mediaPort), '-l', '20000', '-timeout_error'];
  let args: string[];
  if (kind === 'echo') {
    args = ['-sn', 'uas', '-rtp_echo', ...common];
  } else {
    writeFileSync(join(cwd, 'ring.xml'), RING_SCENARIO);
    args = ['-sf', 'ring.xml', ...common];
  }
  // sipp redraws its screen on stdout every second for as long as it runs: nobody reads it.
  const child = spawn('sipp', [...args, '-nostdin'], { cwd, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr?.on('data', (d: Buffer) => { stderr = (stderr + d.toString('utf8')).slice(-4000); });
  started.push(child);
  return { kind, carrier, sipPort, child, errors: () => stderr };
}

/** Kills every far end this module started, each by its pid. */
export function stopFarEnds(): void {
  for (const child of started.splice(0)) {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  }
}

/** The carriers file naming each far end (docs/CONFIGURATION.md "Operator surface" format). */
export function carriersYaml(farEnds: readonly FarEnd[]): string {
  const entries = farEnds.map((f) => [
    `  - name: ${f.carrier}`,
    `    outbound: { uri: "sip:127.0.0.1:${f.sipPort};transport=udp" }`,
    '    codecs: [PCMU]',
    '    max_concurrent_calls: 10000',
    // sipp's scenarios expect INVITEs only: no keep-alive OPTIONS.
    '    options_ping_s: 0',
  ].join('\n'));
  return `carriers:\n${entries.join('\n')}\n`;
}
