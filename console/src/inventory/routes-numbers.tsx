/** @module Routes (DID → agent, delete) and phone numbers (release, with a confirmation). */
import { useState } from 'preact/hooks';
import { api } from '../api.js';
import { ConfirmDialog, ErrorNote, formatTime, messageOf } from '../components.js';
import type { PhoneNumber, Route } from '../types.js';
import { useList } from './use-list.js';

export function RoutesSection() {
  const { items, error, setError, reload, more } = useList<Route>('/v1/routes');
  const [removing, setRemoving] = useState<Route | null>(null);
  const remove = async (route: Route): Promise<void> => {
    setRemoving(null);
    try {
      await api('DELETE', `/v1/routes/${route.id}`);
      await reload();
    } catch (err) {
      setError(messageOf(err));
    }
  };
  return (
    <>
      <ErrorNote error={error} />
      {items?.length === 0 && <p>No routes. Import an agent with a DID number to create one.</p>}
      {items && items.length > 0 && (
        <div class="table-wrap"><table>
          <thead><tr><th scope="col">DID</th><th scope="col">Agent</th><th scope="col">Carrier</th><th scope="col">Created</th><th scope="col">Actions</th></tr></thead>
          <tbody>{items.map((r) => (
            <tr key={r.id}><th scope="row">{r.did_number}</th><td>{r.agent_id}</td><td>{r.carrier}</td><td>{formatTime(r.created_at)}</td>
              <td><button type="button" class="danger" onClick={() => setRemoving(r)} aria-label={`Delete the route of ${r.did_number}`}>Delete</button></td></tr>
          ))}</tbody>
        </table></div>
      )}
      {more && <button type="button" onClick={() => void more()}>Load more</button>}
      {removing && <ConfirmDialog title={`Delete the route of ${removing.did_number}?`} confirmLabel="Delete" onConfirm={() => void remove(removing)} onCancel={() => setRemoving(null)}>
        <p>Calls to this number are then answered SIP 404.</p></ConfirmDialog>}
    </>
  );
}

export function NumbersSection() {
  const { items, error, setError, reload, more } = useList<PhoneNumber>('/v1/numbers');
  const [releasing, setReleasing] = useState<PhoneNumber | null>(null);
  const release = async (n: PhoneNumber): Promise<void> => {
    setReleasing(null);
    try {
      await api('POST', '/v1/numbers/release', { phone_number: n.phone_number, carrier: n.carrier });
      await reload();
    } catch (err) {
      setError(messageOf(err));
    }
  };
  return (
    <>
      <ErrorNote error={error} />
      {items?.length === 0 && <p>No numbers. The operator adds numbers to a tenant.</p>}
      {items && items.length > 0 && (
        <div class="table-wrap"><table>
          <thead><tr><th scope="col">Number</th><th scope="col">Carrier</th><th scope="col">Status</th><th scope="col">Since</th><th scope="col">Actions</th></tr></thead>
          <tbody>{items.map((n) => (
            <tr key={n.id}><th scope="row">{n.phone_number}</th><td>{n.carrier}</td><td>{n.status}</td><td>{formatTime(n.released_at ?? n.created_at)}</td>
              <td>{n.status === 'active' && <button type="button" class="danger" onClick={() => setReleasing(n)} aria-label={`Release ${n.phone_number}`}>Release</button>}</td></tr>
          ))}</tbody>
        </table></div>
      )}
      {more && <button type="button" onClick={() => void more()}>Load more</button>}
      {releasing && <ConfirmDialog title={`Release ${releasing.phone_number}?`} confirmLabel="Release" onConfirm={() => void release(releasing)} onCancel={() => setReleasing(null)}>
        <p>Its routes are removed; calls in progress finish.</p></ConfirmDialog>}
    </>
  );
}
