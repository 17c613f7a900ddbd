/**
 * @module An engine's internal command endpoint (docs/ARCHITECTURE.md "Process roles"): the
 * CallControl commands of an API process, over HTTP on its own port (`internal.host`,
 * loopback by default, and `internal.port`), each authenticated by the shared `cluster.secret`.
 * Nothing a tenant reaches: the API process has checked the key, its scope and the request.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Logger } from '../common/logger.js';
import type { TenantId } from '../common/ids.js';
import { compileValidator } from '../common/schema.js';
import type { CallControl } from '../engine/calls/index.js';
import { bearerMatches, COMMAND_ARGS, INTERNAL_BODY_LIMIT, INTERNAL_PREFIX, isCommandName, type CommandArgs, type CommandName } from './internal-commands.js';

const validators = Object.fromEntries(Object.entries(COMMAND_ARGS).map(([name, schema]) => [name, compileValidator(schema)])) as {
  [C in CommandName]: (value: unknown) => { ok: true; value: CommandArgs<C> } | { ok: false; issues: { path: string; message: string }[] }
};

/** Runs one validated command on the engine's CallControl. */
async function run(calls: CallControl, name: CommandName, args: unknown): Promise<unknown> {
  const tenant = (a: { tenantId: string }): TenantId => a.tenantId as TenantId;
  switch (name) {
    case 'place': { const a = args as CommandArgs<'place'>; return calls.place({ ...a, tenantId: tenant(a) }); }
    case 'hold': { const a = args as CommandArgs<'hold'>; return calls.hold(tenant(a), a.callId); }
    case 'unhold': { const a = args as CommandArgs<'unhold'>; return calls.unhold(tenant(a), a.callId); }
    case 'hangup': { const a = args as CommandArgs<'hangup'>; return calls.hangup(tenant(a), a.callId); }
    case 'transfer': { const a = args as CommandArgs<'transfer'>; return calls.transfer(tenant(a), a.callControlId, a.to); }
    case 'sendDigits': { const a = args as CommandArgs<'sendDigits'>; return calls.sendDigits(tenant(a), a.callId, a.digits); }
    case 'sessionOf': { const a = args as CommandArgs<'sessionOf'>; return calls.sessionOf(tenant(a), a.callId); }
    case 'carrierNames': return calls.carrierNames();
  }
}

function send(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text) });
  res.end(text);
}

/** The body as text, or null once it passed the limit (the answer is then 413). */
function readBody(req: IncomingMessage): Promise<string | null> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= INTERNAL_BODY_LIMIT) chunks.push(chunk);
    });
    req.once('end', () => resolve(size > INTERNAL_BODY_LIMIT ? null : Buffer.concat(chunks).toString('utf8')));
    req.once('error', reject);
  });
}

async function handle(calls: CallControl, secret: string, req: IncomingMessage, res: ServerResponse): Promise<void> {
  if (!bearerMatches(req.headers.authorization, secret)) return send(res, 401, { error: 'unauthorized' });
  const name = req.url?.startsWith(INTERNAL_PREFIX) ? req.url.slice(INTERNAL_PREFIX.length) : '';
  if (!isCommandName(name)) return send(res, 404, { error: 'not_found' });
  if (req.method !== 'POST') return send(res, 405, { error: 'method_not_allowed' });
  const text = await readBody(req);
  if (text === null) return send(res, 413, { error: 'too_large' });
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return send(res, 400, { error: 'invalid_json' });
  }
  const checked = validators[name](json);
  if (!checked.ok) return send(res, 400, { error: 'invalid_arguments', issues: checked.issues });
  send(res, 200, { result: (await run(calls, name, checked.value)) ?? null });
}

/** The endpoint's server (not yet listening). A command that throws answers 500 and is logged; the engine goes on. */
export function internalEndpoint(calls: CallControl, secret: string, logger: Logger): Server {
  const server = createServer((req, res) => {
    handle(calls, secret, req, res).catch((err: unknown) => {
      logger.error({ err, url: req.url }, 'internal command failed');
      if (!res.headersSent) send(res, 500, { error: 'internal' });
      else res.destroy();
    });
  });
  server.keepAliveTimeout = 5_000;
  return server;
}
