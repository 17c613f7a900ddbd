/**
 * @module Inventory (docs/CONSOLE.md "Inventory"): one section per kind of object. A new kind is
 * one more entry in {@link SECTIONS}.
 */
import type { FunctionComponent } from 'preact';
import { AgentsSection } from '../inventory/agents-section.js';
import { NumbersSection, RoutesSection } from '../inventory/routes-numbers.js';
import { SipCredentialsSection } from '../inventory/sip-credentials.js';
import { WebhookEndpointsSection } from '../inventory/webhook-endpoints.js';

export interface InventorySection {
  id: string;
  title: string;
  Body: FunctionComponent;
}

export const SECTIONS: InventorySection[] = [
  { id: 'agents', title: 'Agents', Body: AgentsSection },
  { id: 'routes', title: 'Routes', Body: RoutesSection },
  { id: 'numbers', title: 'Numbers', Body: NumbersSection },
  { id: 'sip-credentials', title: 'SIP credentials', Body: SipCredentialsSection },
  { id: 'webhook-endpoints', title: 'Webhook endpoints', Body: WebhookEndpointsSection },
];

export function InventoryPage() {
  return (
    <section aria-labelledby="inventory-title">
      <h1 id="inventory-title">Inventory</h1>
      <nav aria-label="Inventory sections"><ul class="inline">{SECTIONS.map((s) => <li key={s.id}><a href={`#${s.id}`}>{s.title}</a></li>)}</ul></nav>
      {SECTIONS.map(({ id, title, Body }) => (
        <section key={id} id={id} aria-labelledby={`${id}-title`} class="inventory-section">
          <h2 id={`${id}-title`}>{title}</h2>
          <Body />
        </section>
      ))}
    </section>
  );
}
