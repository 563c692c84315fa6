// The token form: a token is checked with `GET /whoami` before anything else is shown.
import { useState } from 'preact/hooks';
import type { Who } from './types.js';

export function SignIn(p: { who: Who | null; onSignIn: (token: string) => void; onSignOut: () => void }) {
  const [token, setToken] = useState('');
  return (
    <form
      id="login"
      aria-label="Sign in"
      onSubmit={(ev) => {
        ev.preventDefault();
        p.onSignIn(token.trim());
      }}
    >
      <label for="token">Operator or client token</label>{' '}
      <input
        id="token"
        name="token"
        type="password"
        autoComplete="off"
        required
        value={token}
        onInput={(e) => setToken(e.currentTarget.value)}
      />{' '}
      <button type="submit" id="sign-in">
        Sign in
      </button>
      <button type="button" id="sign-out" hidden={!p.who} onClick={p.onSignOut}>
        Sign out
      </button>{' '}
      <span id="whoami" role="status">
        {p.who ? `Signed in as ${p.who.name} (${p.who.role}${p.who.role === 'operator' ? '' : ': read only'})` : ''}
      </span>
    </form>
  );
}
