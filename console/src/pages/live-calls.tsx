/**
 * @module Live calls (docs/CONSOLE.md "Live calls"): the list is read once with `GET /v1/calls`,
 * then kept current by the event stream alone (no polling); hold, unhold, hang-up and transfer
 * call the API, the last two after a confirmation.
 */
import { useEffect, useMemo, useState } from 'preact/hooks';
import { api } from '../api.js';
import { ConfirmDialog, ErrorNote, formatTime, messageOf } from '../components.js';
import { subscribeCallEvents } from '../events.js';
import { linkTo } from '../router.js';
import type { Call, CallPage } from '../types.js';

type Pending = { kind: 'hangup'; call: Call } | { kind: 'transfer'; call: Call };

const newestFirst = (a: Call, b: Call): number => (a.created_at === b.created_at ? (a.id < b.id ? 1 : -1) : a.created_at < b.created_at ? 1 : -1);

/** The live list after one event: an ended call leaves it, any other is added or replaced. */
export function applyCallEvent(calls: Call[], call: Call): Call[] {
  const others = calls.filter((c) => c.id !== call.id);
  return call.state === 'ended' ? others : [...others, call].sort(newestFirst);
}

export function LiveCallsPage() {
  const [calls, setCalls] = useState<Call[] | null>(null);
  const [connected, setConnected] = useState(false);
  const [state, setState] = useState('');
  const [direction, setDirection] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [pending, setPending] = useState<Pending | null>(null);
  const [transferTo, setTransferTo] = useState('');

  useEffect(() => {
    let closed = false;
    // Events that arrive before the first page are applied on top of it.
    const early: Call[] = [];
    let loaded = false;
    const close = subscribeCallEvents({
      onEvent: (event) => (loaded ? setCalls((list) => applyCallEvent(list ?? [], event.data.call)) : early.push(event.data.call)),
      onStatus: setConnected,
    });
    api<CallPage>('GET', '/v1/calls?limit=500').then((page) => {
      if (closed) return;
      loaded = true;
      setCalls(early.reduce(applyCallEvent, [...page.data].sort(newestFirst)));
    }, (err: unknown) => setError(messageOf(err)));
    return () => { closed = true; close(); };
  }, []);

  const shown = useMemo(() => (calls ?? []).filter((c) => (!state || c.state === state) && (!direction || c.direction === direction)), [calls, state, direction]);

  const command = async (call: Call, path: string, body?: unknown): Promise<void> => {
    setError(null);
    try {
      const updated = await api<Call | undefined>('POST', path, body ?? {});
      // The answer is the call as it is now; the stream brings the same change to every console.
      if (updated && 'id' in updated && updated.id === call.id) setCalls((list) => applyCallEvent(list ?? [], updated));
    } catch (err) {
      setError(messageOf(err));
    }
  };
  const confirm = (): void => {
    if (!pending) return;
    const { call } = pending;
    if (pending.kind === 'hangup') void command(call, `/v1/calls/${call.id}/hangup`);
    else void command(call, '/v1/calls/transfer', { call_control_id: call.call_control_id, to: transferTo.trim() });
    setPending(null);
  };

  return (
    <section aria-labelledby="live-title">
      <h1 id="live-title">Live calls</h1>
      <p class="stream" role="status">{connected ? 'Live: updates arrive as they happen.' : 'Connecting to the event stream…'}</p>
      <form class="filters" onSubmit={(e) => e.preventDefault()}>
        <label>State
          <select name="state" value={state} onChange={(e) => setState(e.currentTarget.value)}>
            <option value="">any</option><option value="initiated">initiated</option><option value="ringing">ringing</option><option value="active">active</option>
          </select>
        </label>
        <label>Direction
          <select name="direction" value={direction} onChange={(e) => setDirection(e.currentTarget.value)}>
            <option value="">any</option><option value="inbound">inbound</option><option value="outbound">outbound</option>
          </select>
        </label>
      </form>
      <ErrorNote error={error} />
      {calls === null ? <p>Loading…</p> : shown.length === 0 ? <p>No live calls.</p> : (
        <div class="table-wrap">
          <table class="calls">
            <caption class="visually-hidden">Live calls, newest first</caption>
            <thead><tr><th scope="col">Call</th><th scope="col">State</th><th scope="col">Direction</th><th scope="col">From</th><th scope="col">To</th><th scope="col">Carrier</th><th scope="col">Started</th><th scope="col">Actions</th></tr></thead>
            <tbody>
              {shown.map((call) => (
                <tr key={call.id} data-call-id={call.id}>
                  <th scope="row"><a {...linkTo(`/calls/${call.id}`)}>{call.id}</a></th>
                  <td class="state" data-label="State">{call.state}{call.on_hold ? ' (on hold)' : ''}</td>
                  <td data-label="Direction">{call.direction}</td><td data-label="From">{call.from}</td><td data-label="To">{call.to}</td>
                  <td data-label="Carrier">{call.carrier}</td><td data-label="Started">{formatTime(call.created_at)}</td>
                  <td class="actions">
                    {call.on_hold
                      ? <button type="button" onClick={() => void command(call, `/v1/calls/${call.id}/unhold`)} aria-label={`Unhold ${call.id}`}>Unhold</button>
                      : <button type="button" disabled={call.state !== 'active'} onClick={() => void command(call, `/v1/calls/${call.id}/hold`)} aria-label={`Hold ${call.id}`}>Hold</button>}
                    <button type="button" disabled={call.state !== 'active'} onClick={() => { setTransferTo(''); setPending({ kind: 'transfer', call }); }} aria-label={`Transfer ${call.id}`}>Transfer</button>
                    <button type="button" class="danger" onClick={() => setPending({ kind: 'hangup', call })} aria-label={`Hang up ${call.id}`}>Hang up</button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {pending?.kind === 'hangup' && (
        <ConfirmDialog title="Hang up this call?" confirmLabel="Hang up" onConfirm={confirm} onCancel={() => setPending(null)}>
          <p>{pending.call.from} → {pending.call.to} ends for both parties.</p>
        </ConfirmDialog>
      )}
      {pending?.kind === 'transfer' && (
        <ConfirmDialog title="Transfer this call?" confirmLabel="Transfer" onConfirm={confirm} onCancel={() => setPending(null)}>
          <label for="transfer-to">Transfer {pending.call.from} to (E.164)</label>
          <input id="transfer-to" required pattern="^\+[1-9][0-9]{1,14}$" value={transferTo} onInput={(e) => setTransferTo(e.currentTarget.value)} />
        </ConfirmDialog>
      )}
    </section>
  );
}
