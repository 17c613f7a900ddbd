/** @module Login with an API key: `POST /v1/auth/login` sets the HttpOnly session cookie; the key is not kept. */
import { useState } from 'preact/hooks';
import { ApiProblem, login } from '../api.js';

export function LoginPage({ notice, onLoggedIn }: { notice?: string | undefined; onLoggedIn: () => void }) {
  const [key, setKey] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const submit = async (event: Event): Promise<void> => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      await login(key.trim());
      setKey('');
      onLoggedIn();
    } catch (err) {
      setError(err instanceof ApiProblem && err.status === 401 ? 'That API key is unknown or revoked.' : String((err as Error).message));
    } finally {
      setBusy(false);
    }
  };
  return (
    <main id="main" class="login">
      <h1>Voice gateway console</h1>
      {notice && <p role="status">{notice}</p>}
      <form onSubmit={(e) => void submit(e)} aria-describedby={error ? 'login-error' : undefined}>
        <label for="api-key">API key</label>
        <input id="api-key" name="api_key" type="password" autoComplete="off" required value={key}
          aria-invalid={error ? 'true' : undefined} onInput={(e) => setKey(e.currentTarget.value)} />
        <button type="submit" disabled={busy}>Log in</button>
        {error && <p id="login-error" class="error" role="alert">{error}</p>}
      </form>
      <p class="hint">The key is exchanged for a session cookie and is not stored by the browser.</p>
    </main>
  );
}
