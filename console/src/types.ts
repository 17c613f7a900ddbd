/** The API's objects as the console uses them: all from the types generated from the OpenAPI document. */
import type { components, operations } from './generated/api.js';

type Schemas = components['schemas'];
type Json<O> = O extends { responses: { 200: { content: { 'application/json': infer B } } } } ? B : never;
type JsonCreated<O> = O extends { responses: { 201: { content: { 'application/json': infer B } } } } ? B : never;

export type Call = Schemas['Call'];
export type CallDetail = Json<operations['getCall']>;
export type CallPage = Json<operations['listCalls']>;
export type CallListQuery = NonNullable<operations['listCalls']['parameters']['query']>;
export type Transcript = Json<operations['getCallTranscript']>;
export type SipTrace = Json<operations['getCallSipTrace']>;
export type SipTraceMessage = SipTrace['messages'][number];
export type LegQuality = NonNullable<Schemas['CallDetailRecord']['quality']>['legs'][number];
export type Agent = Schemas['Agent'];
export type AgentPage = Json<operations['listAgents']>;
export type ImportAgentBody = operations['importAgent']['requestBody'] extends { content: { 'application/json': infer B } } | undefined ? B : never;
export type Route = Schemas['Route'];
export type RoutePage = Json<operations['listRoutes']>;
export type PhoneNumber = Schemas['PhoneNumber'];
export type NumberPage = Json<operations['listNumbers']>;
export type SipCredential = Schemas['SipCredential'];
export type SipCredentialPage = Json<operations['listSipCredentials']>;
export type CreatedSipCredential = JsonCreated<operations['createSipCredential']>;
export type WebhookEndpoint = Schemas['WebhookEndpoint'];
export type CreatedWebhookEndpoint = Schemas['WebhookEndpointWithSecret'];
export type DeliveryAttempt = Schemas['DeliveryAttempt'];
export type LoggedEvent = Schemas['Event'];
export type Tenant = Schemas['Tenant'];
export type Problem = Schemas['Problem'];

/**
 * A message of `GET /v1/events/stream` (docs/CONSOLE.md "Live calls"): `data.call` is the Call as
 * `GET /v1/calls/{id}` answers it, without `session`.
 */
export interface CallEvent {
  id: string;
  type: string;
  created_at: string;
  api_version: string;
  data: { call: Call };
}
