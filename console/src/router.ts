/**
 * @module Client routes under /console/ (the gateway answers index.html for each): the path is
 * the state, so a call's detail has an address to share and the browser's back button works.
 */
import { useEffect, useState } from 'preact/hooks';

export const BASE = '/console';

export function navigate(path: string): void {
  history.pushState(null, '', `${BASE}${path}`);
  dispatchEvent(new PopStateEvent('popstate'));
}

/** The current path below /console (`/`, `/calls/call_…`, `/history`, …). */
export function usePath(): string {
  const read = (): string => location.pathname.slice(BASE.length) || '/';
  const [path, setPath] = useState(read);
  useEffect(() => {
    const update = (): void => setPath(read());
    addEventListener('popstate', update);
    return () => removeEventListener('popstate', update);
  }, []);
  return path;
}

/** Props of an in-console link: a real href (opens in a new tab too) that navigates without a reload. */
export function linkTo(path: string): { href: string; onClick: (event: MouseEvent) => void } {
  return {
    href: `${BASE}${path}`,
    onClick(event: MouseEvent) {
      if (event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
      event.preventDefault();
      navigate(path);
    },
  };
}
