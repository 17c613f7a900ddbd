/**
 * @module The tenant console's static files at `/console` (docs/CONSOLE.md): the built single-page
 * application, with `index.html` for its client routes, a Content-Security-Policy that allows
 * nothing from another origin, and long caching only for the hashed assets.
 */
import { send } from '@koa/send';
import type { Middleware } from 'koa';
import { ApiError } from '../../common/errors.js';
import type { ApiState } from '../api-state.js';

export const CONSOLE_PATH = '/console';

/**
 * docs/CONSOLE.md "Security": everything from the gateway's own origin, no inline script or style,
 * no plugin, no framing by another site, no `<base>` that could move relative URLs elsewhere. Media
 * may also be a `blob:` URL: the page's own copy of a recording it fetched from the gateway.
 */
export const CONSOLE_CSP = [
  "default-src 'self'", "script-src 'self'", "style-src 'self'", "img-src 'self'", "font-src 'self'", "connect-src 'self'",
  "media-src 'self' blob:", "object-src 'none'", "base-uri 'none'", "form-action 'self'", "frame-ancestors 'none'",
].join('; ');

export interface ConsoleFilesOptions {
  /** The folder the console build wrote (`dist/console`). */
  root: string;
}

/** A year: asset names carry a hash of their content, so a changed file has a new name. */
const ASSET_MAX_AGE_MS = 365 * 24 * 3600_000;

/** Client routes (`/console/calls/call_…`) have no dot in their last segment; files do. */
const isClientRoute = (path: string): boolean => !/\.[^/]*$/.test(path) && !path.startsWith('/assets/');

export function consoleFiles(options: ConsoleFilesOptions): Middleware<ApiState> {
  const index = async (ctx: Parameters<Middleware<ApiState>>[0]): Promise<void> => {
    await send(ctx, 'index.html', { root: options.root, gzip: false, brotli: false });
    // The entry page names the current asset hashes, so it is revalidated every time.
    ctx.set('Cache-Control', 'no-cache');
  };
  return async (ctx, next) => {
    if (ctx.path !== CONSOLE_PATH && !ctx.path.startsWith(`${CONSOLE_PATH}/`)) {
      await next();
      return;
    }
    ctx.state.routeTemplate = CONSOLE_PATH;
    if (ctx.method !== 'GET' && ctx.method !== 'HEAD') {
      throw new ApiError(405, 'method_not_allowed', 'The console serves GET and HEAD only.', { headers: { Allow: 'GET, HEAD' } });
    }
    ctx.set('Content-Security-Policy', CONSOLE_CSP);
    ctx.set('X-Content-Type-Options', 'nosniff');
    ctx.set('Referrer-Policy', 'no-referrer');
    const path = ctx.path.slice(CONSOLE_PATH.length) || '/';
    try {
      if (path === '/') return await index(ctx);
      const asset = path.startsWith('/assets/');
      await send(ctx, path, { root: options.root, gzip: false, brotli: false, hidden: false, immutable: asset, maxage: asset ? ASSET_MAX_AGE_MS : 0 });
    } catch (err) {
      // @koa/send answers a missing file 404, a path leaving the root 403 and a bad escape 400
      // (http-errors); a client route gets the entry page, anything else the API's 404.
      const status = (err as { status?: unknown }).status;
      if (typeof status !== 'number' || status >= 500) throw err;
      if (isClientRoute(path) && status === 404) {
        try {
          return await index(ctx);
        } catch {
          throw new ApiError(404, 'not_found', 'The console is not built (npm run build:console).');
        }
      }
      throw new ApiError(404, 'not_found', 'No such console file.');
    }
  };
}
