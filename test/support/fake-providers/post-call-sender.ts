/**
 * @module A stand-in for the voice-agent platforms' post-call webhook senders: documented payload
 * shapes (ElevenLabs, Retell, Vapi) posted over real HTTP to a gateway on loopback, and
 * `serveOnLoopback` to put a test app (buildApp) behind a node:http server on 127.0.0.1.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

interface Teardown {
  teardown(fn: () => void | Promise<void>): void;
}

/** Serves a Koa callback on 127.0.0.1 (port 0) until teardown; returns the base URL. */
export async function serveOnLoopback(t: Teardown, callback: (req: IncomingMessage, res: ServerResponse) => unknown): Promise<string> {
  const server = createServer((req, res) => { void callback(req, res); });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => {
    server.closeAllConnections();
    server.close(() => resolve());
  }));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** POSTs `body` as JSON to `/v1/webhooks/<provider>` and returns the HTTP status and the answer's `status`. */
export async function postWebhook(base: string, provider: string, body: unknown): Promise<{ http: number; status: string | undefined }> {
  const res = await fetch(`${base}/v1/webhooks/${provider}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const answer = (await res.json()) as { status?: string };
  return { http: res.status, status: answer.status };
}

export interface CallFacts {
  conversationId: string;
  agentId: string | null;
  /** The DID (agent side) and the caller (remote side) of an inbound call. */
  did: string;
  caller: string;
  /** Epoch milliseconds of the call's end. */
  endMs: number;
  /** Turns as (role, text) pairs; offsets are 0, 2, 4... seconds. */
  turns: readonly ['agent' | 'user', string][];
}

/** ElevenLabs `post_call_transcription`, SIP-trunk phone_call shape. */
export function elevenLabsTranscription(c: CallFacts) {
  const durationS = 30;
  return {
    type: 'post_call_transcription',
    event_timestamp: Math.round(c.endMs / 1000) + 2,
    data: {
      agent_id: c.agentId, conversation_id: c.conversationId, status: 'done',
      transcript: c.turns.map(([role, message], i) => ({ role, message, time_in_call_secs: 2 * i })),
      metadata: {
        start_time_unix_secs: Math.round(c.endMs / 1000) - durationS, call_duration_secs: durationS,
        phone_call: { type: 'sip_trunking', direction: 'inbound', agent_number: c.did, external_number: c.caller, call_sid: `SCL_${c.conversationId}` },
      },
    },
  };
}

/** ElevenLabs `post_call_audio`: no numbers, the whole call as base64 MP3. */
export function elevenLabsAudio(conversationId: string, agentId: string, mp3: Buffer) {
  return { type: 'post_call_audio', event_timestamp: 1739537300, data: { agent_id: agentId, conversation_id: conversationId, full_audio: mp3.toString('base64') } };
}

/** Retell `call_ended` (or `call_analyzed`) of an inbound call; `agent_id` left out when null. */
export function retellCall(c: CallFacts, event: 'call_ended' | 'call_analyzed' = 'call_ended', extra: Record<string, unknown> = {}) {
  return {
    event,
    call: {
      call_id: c.conversationId, ...(c.agentId === null ? {} : { agent_id: c.agentId }), direction: 'inbound', from_number: c.caller, to_number: c.did,
      start_timestamp: c.endMs - 30_000, end_timestamp: c.endMs, disconnection_reason: 'user_hangup',
      transcript_object: c.turns.map(([role, content], i) => ({ role, content, words: [{ word: content.split(' ')[0], start: 2 * i, end: 2 * i + 0.5 }] })),
      ...extra,
    },
  };
}

/** Vapi `end-of-call-report` of an inbound phone call; `assistant` left out when the agent id is null. */
export function vapiReport(c: CallFacts) {
  return {
    message: {
      type: 'end-of-call-report', endedAt: new Date(c.endMs).toISOString(),
      call: { id: c.conversationId, type: 'inboundPhoneCall', customer: { number: c.caller } },
      phoneNumber: { number: c.did }, ...(c.agentId === null ? {} : { assistant: { id: c.agentId } }),
      artifact: { messages: c.turns.map(([role, message], i) => ({ role: role === 'user' ? 'user' : 'bot', message, secondsFromStart: 2 * i })) },
    },
  };
}
