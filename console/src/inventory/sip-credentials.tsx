/** @module SIP credentials: create (the password is sent once and never shown again), list, delete. */
import { useState } from 'preact/hooks';
import { api } from '../api.js';
import { ErrorNote, formatTime, messageOf } from '../components.js';
import type { SipCredential } from '../types.js';
import { useList } from './use-list.js';

export function SipCredentialsSection() {
  const { items, error, setError, reload, more } = useList<SipCredential>('/v1/sip-credentials');
  const [form, setForm] = useState({ username: '', password: '', realm: '' });
  const create = async (event: Event): Promise<void> => {
    event.preventDefault();
    try {
      await api('POST', '/v1/sip-credentials', { username: form.username, password: form.password, ...(form.realm ? { realm: form.realm } : {}) });
      setForm({ username: '', password: '', realm: '' });
      await reload();
    } catch (err) {
      setError(messageOf(err));
    }
  };
  const remove = async (c: SipCredential): Promise<void> => {
    try {
      await api('DELETE', `/v1/sip-credentials/${c.id}`);
      await reload();
    } catch (err) {
      setError(messageOf(err));
    }
  };
  return (
    <>
      <ErrorNote error={error} />
      {items && items.length > 0 && (
        <div class="table-wrap"><table>
          <thead><tr><th scope="col">Username</th><th scope="col">Realm</th><th scope="col">Id</th><th scope="col">Created</th><th scope="col">Actions</th></tr></thead>
          <tbody>{items.map((c) => (
            <tr key={c.id}><th scope="row">{c.username}</th><td>{c.realm ?? '—'}</td><td>{c.id}</td><td>{formatTime(c.created_at)}</td>
              <td><button type="button" class="danger" onClick={() => void remove(c)} aria-label={`Delete the credential ${c.username}`}>Delete</button></td></tr>
          ))}</tbody>
        </table></div>
      )}
      {more && <button type="button" onClick={() => void more()}>Load more</button>}
      <form class="inline-form" onSubmit={(e) => void create(e)}>
        <h3>New SIP credential</h3>
        <label>Username <input required value={form.username} onInput={(e) => setForm({ ...form, username: e.currentTarget.value })} /></label>
        <label>Password <input type="password" autoComplete="new-password" required value={form.password} onInput={(e) => setForm({ ...form, password: e.currentTarget.value })} /></label>
        <label>Realm (optional) <input value={form.realm} onInput={(e) => setForm({ ...form, realm: e.currentTarget.value })} /></label>
        <button type="submit">Create</button>
      </form>
    </>
  );
}
