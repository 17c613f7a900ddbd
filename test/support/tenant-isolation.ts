/**
 * @module The tenant-isolation check every endpoint gets (docs/API.md "Authentication"): another tenant's
 * resource answers exactly like one that does not exist, and changes nothing.
 */
import type { InjectOptions } from 'light-my-request';
import type { Test } from 'tap';
import type { AppHarness, TestTenant } from './build-app.js';


export interface IsolationCase {
  name: string;
  /** The request against the owner's resource. */
  request: InjectOptions;
  /** The same request with an id that never existed. */
  missing: InjectOptions;
  /** Status the owner gets (proves the request is real). */
  ownerStatus: number;
}

/**
 * For each case: the intruder's request gets a 404 `not_found` whose body (less request_id) equals
 * the one for a missing id, then the owner still gets `ownerStatus`. Cases are run intruder first,
 * so a write that leaked across tenants shows up as a changed owner result.
 */
export async function assertTenantIsolation(t: Test, h: AppHarness, owner: TestTenant, intruder: TestTenant, cases: IsolationCase[]): Promise<void> {
  for (const c of cases) {
    const withAuth = (o: InjectOptions, who: TestTenant): InjectOptions => ({ ...o, headers: { ...o.headers, ...who.auth } });
    const foreign = await h.request(withAuth(c.request, intruder));
    const missing = await h.request(withAuth(c.missing, intruder));
    t.equal(foreign.statusCode, 404, `${c.name}: another tenant's resource is a 404`);
    const strip = (body: string) => {
      const { request_id: _ignored, ...rest } = JSON.parse(body) as Record<string, unknown>;
      return rest;
    };
    t.same(strip(foreign.body), strip(missing.body), `${c.name}: identical to a missing id`);
    t.equal(JSON.parse(foreign.body).code, 'not_found');
    const own = await h.request(withAuth(c.request, owner));
    t.equal(own.statusCode, c.ownerStatus, `${c.name}: the owner is unaffected`);
  }
}
