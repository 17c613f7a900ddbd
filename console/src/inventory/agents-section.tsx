/**
 * @module Agents: import (`POST /v1/agents/import`) and edit (`PUT /v1/agents/{id}`) with the same
 * fields as the API, its validation errors shown at the field they name; the provider key is only
 * ever shown as its last four characters.
 */
import { useState } from 'preact/hooks';
import { api, ApiProblem } from '../api.js';
import { ErrorNote, formatTime, messageOf } from '../components.js';
import type { Agent, ImportAgentBody } from '../types.js';
import { useList } from './use-list.js';

const PROVIDERS = ['elevenlabs', 'retell', 'vapi', 'custom', 'ultravox', 'openai'];
type Field = 'provider' | 'external_agent_id' | 'connection_mode' | 'sip_transport' | 'api_key' | 'did_number'
  | 'name' | 'region' | 'sip_credential_id' | 'sip_uri' | 'sip_region' | 'websocket_url';
type Values = Record<Field, string>;

/** Codes the API answers without a `path`, and the field each is about (docs/API.md "Agents, routes, numbers…"). */
const CODE_FIELDS: Record<string, Field> = {
  unsupported_provider: 'provider', unsupported_connection_mode: 'connection_mode', did_not_routable: 'did_number',
  unknown_sip_credential: 'sip_credential_id', provider_credentials_invalid: 'api_key', agent_not_found_on_platform: 'external_agent_id',
};

const empty = (): Values => ({
  provider: 'elevenlabs', external_agent_id: '', connection_mode: 'sip_trunk', sip_transport: '', api_key: '', did_number: '',
  name: '', region: '', sip_credential_id: '', sip_uri: '', sip_region: '', websocket_url: '',
});

const fromAgent = (a: Agent): Values => ({
  ...empty(), provider: a.provider, external_agent_id: a.external_agent_id, connection_mode: a.connection_mode, sip_transport: a.sip_transport ?? '',
  name: a.name ?? '', region: a.region, sip_credential_id: a.sip_credential_id ?? '', sip_uri: a.sip_uri ?? '', sip_region: a.sip_region ?? '', websocket_url: a.websocket_url ?? '',
});

/** The body as the API takes it: empty optional fields left out (the API's defaults apply). */
function bodyOf(values: Values, editing: Agent | null): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(values)) if (value.trim() !== '') body[name] = value.trim();
  if (editing) {
    // provider, external_agent_id and did_number cannot change; the transfer policy is not edited here, so it is kept.
    delete body.provider; delete body.external_agent_id; delete body.did_number;
    if (editing.transfer_policy) body.transfer_policy = editing.transfer_policy;
  }
  return body;
}

/** Field errors from a problem: `errors[].path` (`/name`), or the code's field; the rest is general. */
function fieldErrors(err: unknown): { fields: Partial<Record<Field, string>>; general: string | null } {
  if (!(err instanceof ApiProblem)) return { fields: {}, general: messageOf(err) };
  const fields: Partial<Record<Field, string>> = {};
  for (const e of err.errors) {
    const name = e.path.split('/')[1] as Field | undefined;
    if (name) fields[name] = e.message;
  }
  const byCode = CODE_FIELDS[err.code];
  if (byCode && !fields[byCode]) fields[byCode] = err.message;
  return { fields, general: Object.keys(fields).length === 0 || err.errors.some((e) => !e.path) ? messageOf(err) : null };
}

function AgentForm({ editing, onDone }: { editing: Agent | null; onDone: () => void }) {
  const [values, setValues] = useState<Values>(editing ? fromAgent(editing) : empty());
  const [errors, setErrors] = useState<{ fields: Partial<Record<Field, string>>; general: string | null }>({ fields: {}, general: null });
  const [busy, setBusy] = useState(false);
  const prefix = editing ? `edit-${editing.id}` : 'import';
  const submit = async (event: Event): Promise<void> => {
    event.preventDefault();
    setBusy(true);
    try {
      if (editing) await api('PUT', `/v1/agents/${editing.id}`, bodyOf(values, editing));
      else await api('POST', '/v1/agents/import', bodyOf(values, null) as ImportAgentBody);
      setErrors({ fields: {}, general: null });
      if (!editing) setValues(empty());
      onDone();
    } catch (err) {
      setErrors(fieldErrors(err));
    } finally {
      setBusy(false);
    }
  };
  const input = (name: Field, label: string, extra: Record<string, unknown> = {}) => {
    const id = `${prefix}-${name}`;
    const error = errors.fields[name];
    return (
      <div class="field" key={name}>
        <label for={id}>{label}</label>
        <input id={id} name={name} value={values[name]} aria-invalid={error ? 'true' : undefined} aria-describedby={error ? `${id}-error` : undefined}
          onInput={(e) => setValues({ ...values, [name]: e.currentTarget.value })} {...extra} />
        {error && <p id={`${id}-error`} class="error field-error">{error}</p>}
      </div>
    );
  };
  const select = (name: Field, label: string, options: string[], disabled = false) => {
    const id = `${prefix}-${name}`;
    const error = errors.fields[name];
    return (
      <div class="field" key={name}>
        <label for={id}>{label}</label>
        <select id={id} name={name} value={values[name]} disabled={disabled} aria-invalid={error ? 'true' : undefined} aria-describedby={error ? `${id}-error` : undefined}
          onChange={(e) => setValues({ ...values, [name]: e.currentTarget.value })}>
          {options.map((o) => <option key={o} value={o}>{o || 'default'}</option>)}
        </select>
        {error && <p id={`${id}-error`} class="error field-error">{error}</p>}
      </div>
    );
  };
  return (
    <form class="agent-form" onSubmit={(e) => void submit(e)} aria-label={editing ? `Edit agent ${editing.name ?? editing.id}` : 'Import an agent'}>
      {errors.general && <p class="error" role="alert">{errors.general}</p>}
      {Object.keys(errors.fields).length > 0 && <p class="error" role="alert">The API refused some fields; see below.</p>}
      {select('provider', 'Provider', PROVIDERS, editing !== null)}
      {input('external_agent_id', 'External agent id', { required: true, readOnly: editing !== null })}
      {input('name', 'Name')}
      {select('connection_mode', 'Connection mode', ['sip_trunk', 'media_bridge'])}
      {input('region', 'Region')}
      {input('sip_uri', 'SIP URI', { placeholder: 'sip:agent@edge.example.com' })}
      {select('sip_transport', 'SIP transport', ['', 'udp', 'tcp', 'tls'])}
      {input('sip_region', 'SIP region')}
      {input('sip_credential_id', 'SIP credential id')}
      {input('websocket_url', 'WebSocket URL (media_bridge)')}
      {input('api_key', editing?.api_key_last4 ? `Provider API key (now ••••${editing.api_key_last4}; leave empty to keep)` : 'Provider API key', { type: 'password', autoComplete: 'off' })}
      {!editing && input('did_number', 'DID number to route (E.164)', { type: 'tel' })}
      <button type="submit" disabled={busy}>{editing ? 'Save' : 'Import'}</button>
    </form>
  );
}

export function AgentsSection() {
  const { items, error, reload, more } = useList<Agent>('/v1/agents');
  const [editing, setEditing] = useState<Agent | null>(null);
  return (
    <>
      <ErrorNote error={error} />
      {items?.length === 0 && <p>No agents yet.</p>}
      {items && items.length > 0 && (
        <div class="table-wrap"><table>
          <thead><tr><th scope="col">Name</th><th scope="col">Provider</th><th scope="col">Mode</th><th scope="col">Provider key</th><th scope="col">Verified</th><th scope="col">Actions</th></tr></thead>
          <tbody>{items.map((a) => (
            <tr key={a.id}><th scope="row">{a.name ?? a.external_agent_id}</th><td>{a.provider}</td><td>{a.connection_mode}</td>
              <td>{a.api_key_set ? `••••${a.api_key_last4 ?? ''}` : 'none'}</td><td>{formatTime(a.verified_at)}</td>
              <td><button type="button" onClick={() => setEditing(a)} aria-label={`Edit ${a.name ?? a.external_agent_id}`}>Edit</button></td></tr>
          ))}</tbody>
        </table></div>
      )}
      {more && <button type="button" onClick={() => void more()}>Load more</button>}
      {editing && (<><h3>Edit {editing.name ?? editing.external_agent_id}</h3><AgentForm key={editing.id} editing={editing} onDone={() => { setEditing(null); void reload(); }} />
        <button type="button" onClick={() => setEditing(null)}>Cancel editing</button></>)}
      <h3>Import an agent</h3>
      <AgentForm editing={null} onDone={() => void reload()} />
    </>
  );
}
