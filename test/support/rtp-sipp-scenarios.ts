/**
 * @module sipp scenarios for media interop: a UAC that plays the Debian g711a.pcap and RFC 4733
 * digit captures, and a UAS that answers PCMU with telephone-event for `-rtp_echo`.
 */

/** Digits whose `dtmf_2833_<name>.pcap` the UAC plays after the speech, in order. */
export const PLAYED_DIGITS = [
  { file: '1', digit: '1' },
  { file: '5', digit: '5' },
  { file: 'pound', digit: '#' },
] as const;

const sdpHeader = `v=0
      o=user1 53655765 2353687637 IN IP[local_ip_type] [local_ip]
      s=-`;

/** The built-in uac_pcap flow with several digits and no trailing waits longer than needed. */
export function uacPcapScenario(): string {
  const digits = PLAYED_DIGITS.map(
    (d) => `  <nop><action><exec play_pcap_audio="pcap/dtmf_2833_${d.file}.pcap"/></action></nop>\n  <pause milliseconds="400"/>`,
  ).join('\n');
  return `<?xml version="1.0" encoding="ISO-8859-1" ?>
<scenario name="uac g711a pcap and RFC 4733 digits">
  <send retrans="500"><![CDATA[

      INVITE sip:[service]@[remote_ip]:[remote_port] SIP/2.0
      Via: SIP/2.0/[transport] [local_ip]:[local_port];branch=[branch]
      From: sipp <sip:sipp@[local_ip]:[local_port]>;tag=[pid]SIPpTag09[call_number]
      To: [service] <sip:[service]@[remote_ip]:[remote_port]>
      Call-ID: [call_id]
      CSeq: 1 INVITE
      Contact: sip:sipp@[local_ip]:[local_port]
      Max-Forwards: 70
      Content-Type: application/sdp
      Content-Length: [len]

      ${sdpHeader}
      c=IN IP[local_ip_type] [local_ip]
      t=0 0
      m=audio [auto_media_port] RTP/AVP 8 101
      a=rtpmap:8 PCMA/8000
      a=rtpmap:101 telephone-event/8000
      a=fmtp:101 0-11,16

    ]]></send>
  <recv response="100" optional="true"/>
  <recv response="180" optional="true"/>
  <recv response="200" rtd="true"/>
  <send><![CDATA[

      ACK sip:[service]@[remote_ip]:[remote_port] SIP/2.0
      Via: SIP/2.0/[transport] [local_ip]:[local_port];branch=[branch]
      From: sipp <sip:sipp@[local_ip]:[local_port]>;tag=[pid]SIPpTag09[call_number]
      To: [service] <sip:[service]@[remote_ip]:[remote_port]>[peer_tag_param]
      Call-ID: [call_id]
      CSeq: 1 ACK
      Contact: sip:sipp@[local_ip]:[local_port]
      Max-Forwards: 70
      Content-Length: 0

    ]]></send>
  <nop><action><exec play_pcap_audio="pcap/g711a.pcap"/></action></nop>
  <pause milliseconds="7300"/>
${digits}
  <send retrans="500"><![CDATA[

      BYE sip:[service]@[remote_ip]:[remote_port] SIP/2.0
      Via: SIP/2.0/[transport] [local_ip]:[local_port];branch=[branch]
      From: sipp <sip:sipp@[local_ip]:[local_port]>;tag=[pid]SIPpTag09[call_number]
      To: [service] <sip:[service]@[remote_ip]:[remote_port]>[peer_tag_param]
      Call-ID: [call_id]
      CSeq: 2 BYE
      Contact: sip:sipp@[local_ip]:[local_port]
      Max-Forwards: 70
      Content-Length: 0

    ]]></send>
  <recv response="200"/>
</scenario>
`;
}

/** The built-in uas, answering `codec` (PCMU, or PCMA) plus telephone-event 101 so that echoed digits come back. */
export function uasEchoScenario(codec: 'PCMU' | 'PCMA' = 'PCMU'): string {
  const pt = codec === 'PCMU' ? 0 : 8;
  return `<?xml version="1.0" encoding="ISO-8859-1" ?>
<scenario name="uas answering ${codec} and telephone-event">
  <recv request="INVITE"/>
  <send><![CDATA[

      SIP/2.0 200 OK
      [last_Via:]
      [last_From:]
      [last_To:];tag=[pid]SIPpTag01[call_number]
      [last_Call-ID:]
      [last_CSeq:]
      Contact: <sip:[local_ip]:[local_port];transport=[transport]>
      Content-Type: application/sdp
      Content-Length: [len]

      ${sdpHeader}
      c=IN IP[media_ip_type] [media_ip]
      t=0 0
      m=audio [media_port] RTP/AVP ${pt} 101
      a=rtpmap:${pt} ${codec}/8000
      a=rtpmap:101 telephone-event/8000
      a=fmtp:101 0-15

    ]]></send>
  <recv request="ACK" optional="true"/>
  <recv request="BYE"/>
  <send><![CDATA[

      SIP/2.0 200 OK
      [last_Via:]
      [last_From:]
      [last_To:]
      [last_Call-ID:]
      [last_CSeq:]
      Contact: <sip:[local_ip]:[local_port];transport=[transport]>
      Content-Length: 0

    ]]></send>
</scenario>
`;
}
