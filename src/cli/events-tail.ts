/**
 * @module `vgw events tail TENANT_ID` (docs/EVENTS.md "Live stream"): prints a tenant's events as
 * they are logged, one envelope of JSON per line, until interrupted. The CLI is its own process:
 * it reads the log after the last event it printed, every `pollMs`.
 */
import type { TenantId } from '../common/ids.js';
import type { EventFilter, Store } from '../storage/index.js';
import { CliError } from './operator-commands.js';

export interface TailOptions {
  filter: EventFilter;
  /** Print the events already logged (the retained log) first; otherwise only new ones. */
  fromStart: boolean;
  pollMs: number;
  write(line: string): void;
  signal: AbortSignal;
}

const PAGE = 500;

export async function tailEvents(store: Store, tenantId: string, o: TailOptions): Promise<void> {
  const tenant = await store.tenants.get(tenantId as TenantId);
  if (!tenant) throw new CliError('tenant_not_found', `no tenant ${tenantId}`);
  let last = o.fromStart ? 0 : await store.events.latestSeq(tenant.id);
  while (!o.signal.aborted) {
    const page = await store.events.after(tenant.id, last, o.filter, PAGE);
    for (const event of page) {
      o.write(`${event.payload}\n`);
      last = event.seq;
    }
    if (page.length === PAGE) continue;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, o.pollMs);
      o.signal.addEventListener('abort', () => { clearTimeout(timer); resolve(); }, { once: true });
    });
  }
}
