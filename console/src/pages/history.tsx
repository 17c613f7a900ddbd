/**
 * @module History (docs/CONSOLE.md "History"): ended calls selected by the API's own filters
 * (`GET /v1/calls?state=ended` with number, date range, end reason, carrier), paged with its cursor.
 */
import { useState } from 'preact/hooks';
import { api, query } from '../api.js';
import { ErrorNote, formatTime, messageOf } from '../components.js';
import { linkTo } from '../router.js';
import type { CallListQuery, CallPage } from '../types.js';

const END_REASONS = ['completed', 'busy', 'no_answer', 'declined', 'not_found', 'unavailable', 'carrier_unreachable', 'canceled', 'agent_unreachable',
  'agent_error', 'media_timeout', 'transferred', 'gateway_restart', 'gateway_failure', 'gateway_shutdown', 'number_released', 'failed', 'machine_detected'] as const;
const PAGE = 25;

/** A `datetime-local` value (the browser's local time) as an RFC 3339 instant, or undefined. */
const instant = (local: string): string | undefined => (local ? new Date(local).toISOString() : undefined);

export function HistoryPage() {
  const [form, setForm] = useState({ number: '', after: '', before: '', reason: '', carrier: '' });
  const [page, setPage] = useState<CallPage | null>(null);
  // Cursors of the pages before the current one, to go back.
  const [trail, setTrail] = useState<(string | undefined)[]>([]);
  const [cursor, setCursor] = useState<string | undefined>(undefined);
  const [error, setError] = useState<string | null>(null);

  const load = async (at: string | undefined): Promise<boolean> => {
    setError(null);
    const params: CallListQuery = {
      state: 'ended', limit: PAGE, number: form.number.trim() || undefined, ended_after: instant(form.after), ended_before: instant(form.before),
      end_reason: (form.reason || undefined) as CallListQuery['end_reason'], carrier: form.carrier.trim() || undefined, cursor: at,
    };
    try {
      setPage(await api<CallPage>('GET', `/v1/calls${query(params)}`));
      setCursor(at);
      return true;
    } catch (err) {
      setError(messageOf(err));
      return false;
    }
  };
  const field = (name: keyof typeof form) => ({
    name, value: form[name], onInput: (e: Event) => setForm({ ...form, [name]: (e.currentTarget as HTMLInputElement).value }),
  });

  return (
    <section aria-labelledby="history-title">
      <h1 id="history-title">History</h1>
      <form class="filters" onSubmit={(e) => { e.preventDefault(); setTrail([]); void load(undefined); }}>
        <label>Number <input type="tel" placeholder="+15550100" {...field('number')} /></label>
        <label>Ended after <input type="datetime-local" {...field('after')} /></label>
        <label>Ended before <input type="datetime-local" {...field('before')} /></label>
        <label>End reason
          <select {...field('reason')} onChange={(e) => setForm({ ...form, reason: e.currentTarget.value })}>
            <option value="">any</option>{END_REASONS.map((r) => <option key={r} value={r}>{r}</option>)}
          </select>
        </label>
        <label>Carrier <input {...field('carrier')} /></label>
        <button type="submit">Search</button>
      </form>
      <p class="hint">Without "Ended after", only calls that ended in the last minutes (the live window) are searched.</p>
      <ErrorNote error={error} />
      {page && (page.data.length === 0 ? <p>No ended calls match.</p> : (
        <div class="table-wrap">
          <table class="calls">
            <caption class="visually-hidden">Ended calls, newest first</caption>
            <thead><tr><th scope="col">Call</th><th scope="col">From</th><th scope="col">To</th><th scope="col">Carrier</th><th scope="col">Ended</th><th scope="col">End reason</th></tr></thead>
            <tbody>
              {page.data.map((call) => (
                <tr key={call.id}>
                  <th scope="row"><a {...linkTo(`/calls/${call.id}`)}>{call.id}</a></th>
                  <td data-label="From">{call.from}</td><td data-label="To">{call.to}</td><td data-label="Carrier">{call.carrier}</td>
                  <td data-label="Ended">{formatTime(call.ended_at)}</td><td data-label="End reason">{call.end_reason}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ))}
      {page && (
        <nav class="pager" aria-label="Pages">
          <button type="button" disabled={trail.length === 0} onClick={() => { const back = trail.at(-1); void load(back).then((ok) => ok && setTrail(trail.slice(0, -1))); }}>Previous page</button>
          <button type="button" disabled={!page.has_more} onClick={() => { const from = cursor; void load(page.next_cursor ?? undefined).then((ok) => ok && setTrail([...trail, from])); }}>Next page</button>
        </nav>
      )}
    </section>
  );
}
