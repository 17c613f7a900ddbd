/**
 * @module A call's detail (docs/CONSOLE.md "Call detail"): the state timeline, the CDR and each
 * leg's quality, the SIP ladder, the recording with its waveform and the transcript, the call's
 * events (its log, then the stream while the page is open), and downloads (recording, pcap).
 */
import { useEffect, useState } from 'preact/hooks';
import { api, ApiProblem, fetchBytes } from '../api.js';
import { clock, ErrorNote, formatTime, messageOf } from '../components.js';
import { subscribeCallEvents } from '../events.js';
import type { CallDetail, LegQuality, LoggedEvent, SipTrace, Transcript } from '../types.js';
import { RecordingPlayer } from './recording-player.js';
import { SipLadder } from './sip-ladder.js';

const PCAP = 'application/vnd.tcpdump.pcap';

/** What the events list shows of an event, from the log or the stream. */
interface EventLine { id: string; type: string; created_at: string }

/** `more` added to `list` in order, leaving out those already in it (the stream repeats what the log gave). */
const merged = (list: EventLine[], more: EventLine[]): EventLine[] => {
  const seen = new Set(list.map((e) => e.id));
  return [...list, ...more.filter((e) => !seen.has(e.id))];
};

/** A 404 is "there is none", shown as such; anything else is an error. */
async function optional<T>(load: Promise<T>): Promise<T | null> {
  try {
    return await load;
  } catch (err) {
    if (err instanceof ApiProblem && err.status === 404) return null;
    throw err;
  }
}

function Timeline({ call }: { call: CallDetail }) {
  const steps: [string, string | null | undefined][] = [
    ['created', call.created_at], ['answered', call.answered_at],
    ...(call.transfer ? [[`transfer to ${call.transfer.to} (${call.transfer.state})`, call.transfer.started_at] as [string, string]] : []),
    [`ended${call.end_reason ? `: ${call.end_reason}` : ''}${call.sip_status ? ` (SIP ${call.sip_status})` : ''}`, call.ended_at],
  ];
  return (
    <ol class="timeline">
      {steps.filter(([, at]) => at).map(([label, at]) => <li key={label}><time dateTime={at!}>{formatTime(at)}</time> {label}</li>)}
      {call.state !== 'ended' && <li>now: {call.state}{call.on_hold ? ', on hold' : ''}</li>}
    </ol>
  );
}

function QualityTable({ legs }: { legs: LegQuality[] }) {
  return (
    <div class="table-wrap">
      <table>
        <caption>Quality per leg</caption>
        <thead><tr><th scope="col">Leg</th><th scope="col">Codec</th><th scope="col">MOS</th><th scope="col">Lost</th><th scope="col">Jitter mean / max (ms)</th><th scope="col">RTT (ms)</th><th scope="col">Packets in / out</th></tr></thead>
        <tbody>
          {legs.map((leg) => (
            <tr key={leg.leg}>
              <th scope="row">{leg.leg}{leg.srtp ? ' (SRTP)' : ''}</th><td>{leg.codec}</td><td>{leg.mos.toFixed(2)}</td>
              <td>{leg.packets_lost}{leg.packets_lost_reported !== null ? ` (far end: ${leg.packets_lost_reported})` : ''}</td>
              <td>{leg.jitter_mean_ms.toFixed(1)} / {leg.jitter_max_ms.toFixed(1)}</td><td>{leg.rtt_ms === null ? '—' : leg.rtt_ms.toFixed(0)}</td>
              <td>{leg.packets_received} / {leg.packets_sent}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

function Cdr({ cdr }: { cdr: NonNullable<CallDetail['cdr']> }) {
  return (
    <dl class="facts">
      <dt>Duration</dt><dd>{cdr.duration_s.toFixed(1)} s</dd>
      <dt>Billable</dt><dd>{cdr.billable_s} s</dd>
      <dt>End reason</dt><dd>{cdr.end_reason}{cdr.sip_status ? ` (SIP ${cdr.sip_status})` : ''}</dd>
      <dt>Hung up by</dt><dd>{cdr.hangup_by ?? '—'}</dd>
    </dl>
  );
}

export function CallDetailPage({ id }: { id: string }) {
  const [call, setCall] = useState<CallDetail | null>(null);
  const [trace, setTrace] = useState<SipTrace | null>(null);
  const [transcript, setTranscript] = useState<Transcript | null>(null);
  const [events, setEvents] = useState<EventLine[]>([]);
  const [error, setError] = useState<string | null>(null);
  const [version, setVersion] = useState(0);

  useEffect(() => {
    let stale = false;
    const base = `/v1/calls/${encodeURIComponent(id)}`;
    Promise.all([
      api<CallDetail>('GET', base), optional(api<SipTrace>('GET', `${base}/sip-trace`)), optional(api<Transcript>('GET', `${base}/transcript`)),
      api<{ data: LoggedEvent[] }>('GET', `/v1/events?call_id=${encodeURIComponent(id)}&limit=100`),
    ]).then(([detail, ladder, turns, logged]) => {
      if (stale) return;
      setCall(detail);
      setTrace(ladder);
      setTranscript(turns);
      // The log is newest first; the page lists them in the order they happened.
      setEvents((list) => merged([...logged.data].reverse(), list));
    }, (err: unknown) => setError(messageOf(err)));
    return () => { stale = true; };
  }, [id, version]);

  const live = call !== null && call.state !== 'ended';
  useEffect(() => {
    if (!live) return undefined;
    // Each event of this call is listed and the detail read again (the ladder and session change too).
    return subscribeCallEvents({ onEvent: (event) => { setEvents((list) => merged(list, [event])); setVersion((v) => v + 1); }, onStatus: () => undefined }, id);
  }, [id, live]);

  const downloadPcap = async (): Promise<void> => {
    try {
      const url = URL.createObjectURL(await fetchBytes(`/v1/calls/${encodeURIComponent(id)}/sip-trace`, PCAP));
      const a = Object.assign(document.createElement('a'), { href: url, download: `${id}.pcap` });
      a.click();
      setTimeout(() => URL.revokeObjectURL(url), 10_000);
    } catch (err) {
      setError(messageOf(err));
    }
  };

  if (!call) return <section><h1>Call {id}</h1><ErrorNote error={error} />{!error && <p>Loading…</p>}</section>;
  return (
    <section aria-labelledby="call-title" class="call-detail">
      <h1 id="call-title">Call {call.from} → {call.to}</h1>
      <p class="sub">{call.id} · {call.direction} · {call.carrier} · <span class="state">{call.state}{call.on_hold ? ' (on hold)' : ''}</span></p>
      <ErrorNote error={error} />
      <h2>Timeline</h2>
      <Timeline call={call} />
      {call.cdr && (<><h2>Call detail record</h2><Cdr cdr={call.cdr} />{call.cdr.quality && <QualityTable legs={call.cdr.quality.legs} />}</>)}
      <h2>SIP ladder</h2>
      {trace ? <SipLadder trace={trace} /> : <p>No SIP trace is kept for this call.</p>}
      <h2>Recording and transcript</h2>
      {call.recording.available ? <RecordingPlayer callId={call.id} transcript={transcript} /> : <p>No recording.</p>}
      {!call.recording.available && transcript && (
        <ol class="transcript">{transcript.turns.map((turn, i) => <li key={i}>{clock(turn.offset_s)} <span class="role">{turn.role}</span> {turn.text}</li>)}</ol>
      )}
      {!transcript && <p>No transcript.</p>}
      <h2>Events</h2>
      {events.length === 0 ? <p>{live ? 'Waiting for events of this call…' : 'No events in the log for this call.'}</p> : (
        <ol class="events">{events.map((e) => <li key={e.id}><time dateTime={e.created_at}>{formatTime(e.created_at)}</time> {e.type}</li>)}</ol>
      )}
      <h2>Downloads</h2>
      <ul class="downloads">
        {call.recording.available && <li><a href={`/v1/calls/${call.id}/recording`} download={`${call.id}.wav`}>Recording (WAV)</a></li>}
        {trace && <li><button type="button" class="link" onClick={() => void downloadPcap()}>SIP trace (pcap)</button></li>}
      </ul>
    </section>
  );
}
