/**
 * @module Webhook endpoints (docs/CONSOLE.md "Inventory", docs/EVENTS.md): create one (its signing
 * secret is shown once, in the answer), rotate the secret, disable or enable, delete, and each
 * endpoint's delivery log with a redelivery of any attempt's event.
 */
import { useState } from 'preact/hooks';
import { api } from '../api.js';
import { ConfirmDialog, ErrorNote, formatTime, messageOf } from '../components.js';
import type { CreatedWebhookEndpoint, DeliveryAttempt, WebhookEndpoint } from '../types.js';
import { useList } from './use-list.js';

/** `*`, or event types separated by commas or spaces. */
const parseEvents = (text: string): string[] => text.split(/[\s,]+/).filter((type) => type !== '');

export function WebhookEndpointsSection() {
  const { items, error, setError, reload, more } = useList<WebhookEndpoint>('/v1/webhook-endpoints');
  const [form, setForm] = useState({ url: '', events: '*', description: '' });
  const [secret, setSecret] = useState<{ id: string; secret: string } | null>(null);
  const [deleting, setDeleting] = useState<WebhookEndpoint | null>(null);
  const [open, setOpen] = useState<string | null>(null);
  const act = async (work: () => Promise<void>): Promise<void> => {
    try {
      await work();
      await reload();
    } catch (err) {
      setError(messageOf(err));
    }
  };
  const create = (event: Event): void => {
    event.preventDefault();
    void act(async () => {
      const created = await api<CreatedWebhookEndpoint>('POST', '/v1/webhook-endpoints', {
        url: form.url, events: parseEvents(form.events), ...(form.description ? { description: form.description } : {}),
      });
      setSecret({ id: created.id, secret: created.secret });
      setForm({ url: '', events: '*', description: '' });
    });
  };
  const rotate = (e: WebhookEndpoint): Promise<void> => act(async () => {
    const rotated = await api<CreatedWebhookEndpoint>('POST', `/v1/webhook-endpoints/${e.id}/rotate-secret`);
    setSecret({ id: rotated.id, secret: rotated.secret });
  });
  return (
    <>
      <ErrorNote error={error} />
      {secret && (
        <div class="secret" role="status">
          <p>The signing secret of {secret.id}, shown this once (the previous one, after a rotation, signs for 24 hours more):</p>
          <p><code>{secret.secret}</code></p>
          <button type="button" onClick={() => setSecret(null)}>I have saved it</button>
        </div>
      )}
      {items && items.length > 0 && (
        <div class="table-wrap"><table>
          <thead><tr><th scope="col">URL</th><th scope="col">Events</th><th scope="col">State</th><th scope="col">Id</th><th scope="col">Actions</th></tr></thead>
          <tbody>{items.map((e) => (
            <tr key={e.id}>
              <th scope="row">{e.url}{e.description && <div class="hint">{e.description}</div>}</th>
              <td>{e.events.join(', ')}</td>
              <td>{e.disabled ? 'disabled' : e.failing.flagged_at ? `failing since ${formatTime(e.failing.flagged_at)}` : 'enabled'}</td>
              <td>{e.id}</td>
              <td class="actions">
                <button type="button" aria-expanded={open === e.id} onClick={() => setOpen(open === e.id ? null : e.id)}>Deliveries</button>
                <button type="button" onClick={() => void act(() => api('PATCH', `/v1/webhook-endpoints/${e.id}`, { disabled: !e.disabled }).then(() => undefined))}>{e.disabled ? 'Enable' : 'Disable'}</button>
                <button type="button" onClick={() => void rotate(e)}>Rotate secret</button>
                <button type="button" class="danger" onClick={() => setDeleting(e)} aria-label={`Delete the endpoint ${e.url}`}>Delete</button>
              </td>
            </tr>
          ))}</tbody>
        </table></div>
      )}
      {more && <button type="button" onClick={() => void more()}>Load more</button>}
      {open && <Deliveries endpointId={open} />}
      {deleting && (
        <ConfirmDialog title="Delete this endpoint?" confirmLabel="Delete" onCancel={() => setDeleting(null)}
          onConfirm={() => { const e = deleting; setDeleting(null); void act(() => api('DELETE', `/v1/webhook-endpoints/${e.id}`).then(() => undefined)); }}>
          <p>{deleting.url} receives no more events; what it was due is not sent.</p>
        </ConfirmDialog>
      )}
      <form class="inline-form" onSubmit={create} aria-labelledby="new-endpoint-title">
        <h3 id="new-endpoint-title">New webhook endpoint</h3>
        <label>URL <input type="url" required value={form.url} onInput={(e) => setForm({ ...form, url: e.currentTarget.value })} /></label>
        <label>Events (* or event types) <input required value={form.events} onInput={(e) => setForm({ ...form, events: e.currentTarget.value })} /></label>
        <label>Description (optional) <input value={form.description} onInput={(e) => setForm({ ...form, description: e.currentTarget.value })} /></label>
        <button type="submit">Create</button>
      </form>
    </>
  );
}

/** One endpoint's attempts, newest first; an attempt's event can be sent again. */
function Deliveries({ endpointId }: { endpointId: string }) {
  const { items, error, setError, reload, more } = useList<DeliveryAttempt>(`/v1/webhook-endpoints/${endpointId}/deliveries`);
  const [sent, setSent] = useState<string | null>(null);
  const redeliver = async (a: DeliveryAttempt): Promise<void> => {
    try {
      await api('POST', `/v1/events/${a.event_id}/redeliver`);
      setSent(a.event_id);
      await reload();
    } catch (err) {
      setError(messageOf(err));
    }
  };
  return (
    <section aria-labelledby="deliveries-title" class="deliveries">
      <h3 id="deliveries-title">Deliveries to {endpointId}</h3>
      <ErrorNote error={error} />
      {sent && <p role="status">{sent} is due again now.</p>}
      {items && items.length === 0 && <p>No delivery yet.</p>}
      {items && items.length > 0 && (
        <div class="table-wrap"><table>
          <thead><tr><th scope="col">Time</th><th scope="col">Event</th><th scope="col">Attempt</th><th scope="col">Outcome</th><th scope="col">Duration</th><th scope="col">Actions</th></tr></thead>
          <tbody>{items.map((a) => (
            <tr key={a.id}>
              <th scope="row">{formatTime(a.created_at)}</th><td>{a.event_id}</td><td>{a.attempt}</td>
              <td>{a.ok ? `delivered (${a.status})` : `${a.error ?? 'failed'}${a.next_attempt_at ? `; next ${formatTime(a.next_attempt_at)}` : ''}`}</td>
              <td>{a.duration_ms} ms</td>
              <td><button type="button" onClick={() => void redeliver(a)} aria-label={`Redeliver ${a.event_id}`}>Redeliver</button></td>
            </tr>
          ))}</tbody>
        </table></div>
      )}
      {more && <button type="button" onClick={() => void more()}>Load more</button>}
    </section>
  );
}
