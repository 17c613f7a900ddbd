/**
 * @module The one configuration schema. Every setting has a default, so a parsed config is
 * complete; the file (VGW_CONFIG) and VGW_* environment variables only override.
 */
import { Type, type Static } from '@sinclair/typebox';
import { StringEnum } from '../common/schema.js';

const Port = Type.Integer({ minimum: 0, maximum: 65535 });
const strict = { additionalProperties: false } as const;

const ProviderOverride = Type.Object(
  {
    api_base_url: Type.Optional(Type.String({ format: 'uri' })),
    ws_base_url: Type.Optional(Type.String({ format: 'uri' })),
    sip_host: Type.Optional(Type.String({ minLength: 1 })),
    /**
     * SRTP with SDES keys on sip_trunk legs to this platform's SIP edge (RFC 4568), as a carrier's
     * `media_encryption`: for platforms set to require encrypted media. Plain RTP by default.
     */
    media_encryption: Type.Optional(StringEnum(['disabled', 'allowed', 'required'])),
  },
  strict,
);

export const ConfigSchema = Type.Object(
  {
    data_dir: Type.String({ default: './data', minLength: 1 }),
    log_level: StringEnum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'], { default: 'info' }),
    /** Master key for secrets at rest: 32 bytes as 64 hex characters or base64. */
    secret_key: Type.Optional(Type.String({ minLength: 1 })),
    carriers_file: Type.Optional(Type.String({ minLength: 1 })),
    http: Type.Object(
      {
        host: Type.String({ default: '127.0.0.1' }),
        port: Type.Integer({ minimum: 0, maximum: 65535, default: 8080 }),
        /** Plain-HTTP local development only: drop `Secure` from the session cookie. */
        cookie_secure: Type.Boolean({ default: true }),
        /** Origins allowed to make cookie-authenticated unsafe requests (besides the API's own). */
        allowed_origins: Type.Array(Type.String({ format: 'uri' }), { default: [] }),
        body_limit_bytes: Type.Integer({ minimum: 1024, default: 1_048_576 }),
        webhook_body_limit_bytes: Type.Integer({ minimum: 1024, default: 67_108_864 }),
        /**
         * Bodies that may be larger than large_body_bytes (by Content-Length, or chunked or
         * compressed on a route that allows more) are read at most max_large_bodies_per_client at
         * once per client address (429 beyond) and max_large_bodies at once overall (503 beyond).
         */
        large_body_bytes: Type.Integer({ minimum: 1024, default: 1_048_576 }),
        max_large_bodies_per_client: Type.Integer({ minimum: 1, default: 2 }),
        max_large_bodies: Type.Integer({ minimum: 1, default: 8 }),
        /** Requests per second per API key (or per client address when unauthenticated). */
        rate_limit_per_second: Type.Integer({ minimum: 1, default: 100 }),
        rate_limit_burst: Type.Integer({ minimum: 1, default: 200 }),
        /** Trust X-Forwarded-For for the client address (only behind a proxy you run). */
        trust_proxy: Type.Boolean({ default: false }),
      },
      { ...strict, default: {} },
    ),
    auth: Type.Object(
      {
        session_idle_minutes: Type.Integer({ minimum: 1, default: 60 }),
        session_absolute_hours: Type.Integer({ minimum: 1, default: 24 }),
      },
      { ...strict, default: {} },
    ),
    sip: Type.Object(
      {
        host: Type.String({ default: '0.0.0.0' }),
        port: Type.Integer({ minimum: 0, maximum: 65535, default: 5060 }),
        /** Address advertised in SDP and Contact; the SIP host when absent. */
        public_ip: Type.Optional(Type.String({ minLength: 1 })),
        t1_ms: Type.Integer({ minimum: 50, default: 500 }),
        t2_ms: Type.Integer({ minimum: 100, default: 4000 }),
        t4_ms: Type.Integer({ minimum: 100, default: 5000 }),
        max_message_bytes: Type.Integer({ minimum: 1500, default: 65_535 }),
        /** Per-source flood protection: datagrams and stream messages per second from one address, and the burst allowed. */
        rate_limit_per_second: Type.Integer({ minimum: 1, default: 2000 }),
        rate_limit_burst: Type.Integer({ minimum: 1, default: 4000 }),
        /**
         * SIP over TLS (RFC 3261 26.2): listen on `port` with this certificate, and dial `sips:` and
         * `transport=tls` targets, checking their certificates against the system's roots (plus
         * `ca_file`, PEM, for a carrier's private CA).
         */
        tls: Type.Optional(Type.Object({ port: Port, cert_file: Type.String(), key_file: Type.String(), ca_file: Type.Optional(Type.String()) }, strict)),
        /** What happens to an INVITE from an address that matches no carrier. */
        unknown_source: StringEnum(['reject', 'drop'], { default: 'reject' }),
        /**
         * Inbound SIP TCP and TLS connections (docs/RELIABILITY.md, "Descriptor budget"): caps for
         * addresses that are no carrier's, together and each; a cap per carrier source address,
         * outside the overall one; closing after no SIP message either way, or no valid request
         * since the accept (keep-alives count for neither).
         */
        tcp: Type.Object(
          {
            max_connections: Type.Integer({ minimum: 1, default: 256 }),
            max_connections_per_source: Type.Integer({ minimum: 1, default: 16 }),
            max_connections_per_carrier_source: Type.Integer({ minimum: 1, default: 64 }),
            idle_timeout_seconds: Type.Integer({ minimum: 1, default: 300 }),
            first_message_timeout_seconds: Type.Integer({ minimum: 1, default: 20 }),
          },
          { ...strict, default: {} },
        ),
        /**
         * Edge proxies (addresses, CIDRs) whose `X-VGW-Source: ip[:port]` header names the
         * packet's original source; carrier matching uses it (docs/ARCHITECTURE.md, trusted proxies).
         */
        trusted_proxies: Type.Array(Type.String(), { default: [] }),
        /**
         * A SIP URI (`sip:host[:port][;transport=…]`): every out-of-dialog request (INVITE, OPTIONS,
         * REGISTER) goes there with it as a pre-loaded Route (RFC 3261 §8.1.2), so carriers see the
         * edge's address (docs/CLUSTER.md). In-dialog requests follow the dialog's route set.
         */
        outbound_proxy: Type.Optional(Type.String({ pattern: '^sips?:', minLength: 5 })),
      },
      { ...strict, default: {} },
    ),
    rtp: Type.Object(
      {
        port_min: Type.Integer({ minimum: 1024, maximum: 65534, default: 20000 }),
        port_max: Type.Integer({ minimum: 1025, maximum: 65535, default: 29999 }),
        /** Local address RTP sockets bind to; the SIP host when absent. */
        bind_address: Type.Optional(Type.String({ minLength: 1 })),
        /**
         * How media sockets read and write: `native`, the batched I/O addon (Linux; recvmmsg over
         * one epoll set); `dgram`, Node's own sockets; `auto`, the addon where it is built.
         */
        socket_io: StringEnum(['auto', 'native', 'dgram'], { default: 'auto' }),
        /**
         * With the addon: relay passthrough streams on a thread of the addon's own, so that
         * relayed packets never wait for JavaScript. Off, the event loop relays them itself.
         */
        relay_thread: Type.Boolean({ default: true }),
        /**
         * 1 to 99: the relay thread runs in SCHED_RR at that priority, so a relayed packet never
         * waits for it to get a core; needs CAP_SYS_NICE or LimitRTPRIO. 0: time-sharing.
         */
        relay_thread_priority: Type.Integer({ minimum: 0, maximum: 99, default: 0 }),
        /**
         * Once a leg has latched, take RTP only from the latched address and learn a new source
         * only from the latched host (a NAT rebinding), the host the SDP named or the carrier's
         * `media_networks` (docs/SECURITY.md "Media sources"). False: from any host after
         * probation, which lets a stranger who knows the port take the call's audio.
         */
        strict_source: Type.Boolean({ default: true }),
      },
      { ...strict, default: {} },
    ),
    calls: Type.Object(
      {
        /** How long ended calls stay in `GET /v1/calls?state=ended`. */
        live_window_minutes: Type.Integer({ minimum: 1, default: 15 }),
        max_concurrent_per_tenant: Type.Integer({ minimum: 1, default: 100 }),
        allow_private_agent_urls: Type.Boolean({ default: false }),
        /** Outbound-address policy (docs/SECURITY.md): SIP targets of sip_trunk agents on non-public addresses. */
        allow_private_sip_targets: Type.Boolean({ default: false }),
        /** Non-public networks (addresses or CIDRs) that agent URLs and sip_trunk targets may reach anyway. */
        allowed_private_networks: Type.Array(Type.String({ minLength: 1 }), { default: [] }),
        /** An outbound attempt not answered within this time is cancelled (`no_answer`). */
        ring_timeout_seconds: Type.Integer({ minimum: 1, maximum: 600, default: 60 }),
        /** Number prefixes no agent may transfer to, whatever its policy (docs/API.md "Transfers asked by the agent"). */
        transfer_denied_prefixes: Type.Array(Type.String({ pattern: '^\\+[0-9]{1,15}$' }), { default: ['+1900', '+1976'] }),
        /** No RTP from the remote party for this long ends an answered call (`media_timeout`); 0 = never. */
        media_timeout_seconds: Type.Integer({ minimum: 0, default: 60 }),
        /** A WAV file played to the remote party while a call is on hold (silence when absent). */
        hold_music_file: Type.Optional(Type.String({ minLength: 1 })),
        /** Whether inbound calls to imported agents are recorded (stereo WAV, caller left, agent right). */
        record_inbound: Type.Boolean({ default: true }),
        /** Time an agent WebSocket has to open and be ready once the callee answers. */
        agent_connect_timeout_seconds: Type.Integer({ minimum: 1, maximum: 60, default: 10 }),
      },
      { ...strict, default: {} },
    ),
    sandbox: Type.Object(
      {
        /** How long the sandbox far end rings before it answers. */
        ring_ms: Type.Integer({ minimum: 0, maximum: 30_000, default: 1000 }),
        /** What it says after answering (synthesized with flite when installed, else tones). */
        announcement: Type.String({ default: 'Hello from the voice gateway sandbox. Everything you say will be echoed back.' }),
      },
      { ...strict, default: {} },
    ),
    webhooks: Type.Object(
      {
        attribution_window_minutes: Type.Integer({ minimum: 1, default: 120 }),
        /** Optional per-provider signing secrets; signature checking is off without one. */
        secrets: Type.Record(Type.String(), Type.String({ minLength: 1 }), { default: {} }),
        /**
         * Hosts a provider's recording URL may point at (exact names or `*.suffix`); an empty list
         * never downloads. Retell's storage host is not documented: add it from a real payload,
         * never a whole shared CDN. ElevenLabs sends audio inline.
         */
        recording_hosts: Type.Object(
          {
            elevenlabs: Type.Array(Type.String({ minLength: 1 }), { default: [] }),
            retell: Type.Array(Type.String({ minLength: 1 }), { default: [] }),
            vapi: Type.Array(Type.String({ minLength: 1 }), { default: ['storage.vapi.ai'] }),
          },
          { ...strict, default: {} },
        ),
        download_max_bytes: Type.Integer({ minimum: 1024, default: 104_857_600 }),
        /** The webhook answer waits for the download, so this also bounds the provider's wait. */
        download_timeout_seconds: Type.Integer({ minimum: 1, default: 30 }),
        download_max_redirects: Type.Integer({ minimum: 0, maximum: 10, default: 3 }),
        /**
         * Raw bodies kept for audit (docs/WEBHOOKS.md "Raw payload caps"): beyond either cap a
         * delivery is still applied, but its body is not kept (`payload_omitted` says which cap).
         */
        max_raw_bytes_per_call: Type.Integer({ minimum: 0, default: 4_194_304 }),
        max_raw_bytes_total: Type.Integer({ minimum: 0, default: 268_435_456 }),
      },
      { ...strict, default: {} },
    ),
    /** The gateway's own speech recognition of answered calls, stored as the `gateway` transcript. */
    transcription: Type.Object(
      {
        engine: StringEnum(['none', 'pocketsphinx'], { default: 'none' }),
        /** The parties transcribed, one recognition stream each per call. */
        channels: Type.Array(StringEnum(['caller', 'agent']), { default: ['caller', 'agent'], uniqueItems: true }),
        pocketsphinx: Type.Object(
          {
            /** Debian 12's pocketsphinx package installs `pocketsphinx_continuous`. */
            command: Type.String({ minLength: 1, default: 'pocketsphinx_continuous' }),
            /** Acoustic model folder (`-hmm`); the package's en-us model when absent. */
            model: Type.Optional(Type.String({ minLength: 1 })),
            /** Further decoder arguments, replacing the default VAD threshold (`-jsgf`, `-kws`, `-lm`, `-dict`). */
            args: Type.Array(Type.String(), { default: ['-vad_threshold', '3.0'] }),
          },
          { ...strict, default: {} },
        ),
      },
      { ...strict, default: {} },
    ),
    /** Answering-machine detection thresholds (docs/CONFIGURATION.md "Answering-machine detection"). */
    amd: Type.Object(
      {
        initial_silence_ms: Type.Integer({ minimum: 500, maximum: 30_000, default: 4500 }),
        max_human_greeting_ms: Type.Integer({ minimum: 300, maximum: 10_000, default: 2600 }),
        after_greeting_silence_ms: Type.Integer({ minimum: 100, maximum: 5000, default: 800 }),
        min_word_ms: Type.Integer({ minimum: 20, maximum: 1000, default: 100 }),
        beep_ms: Type.Integer({ minimum: 40, maximum: 2000, default: 160 }),
        fax_tone_ms: Type.Integer({ minimum: 100, maximum: 3000, default: 300 }),
        /** hold_until_result with wait_for_beep: silence after a machine decision that ends a greeting with no beep. */
        greeting_end_silence_ms: Type.Integer({ minimum: 300, maximum: 10_000, default: 1500 }),
        /** hold_until_result with wait_for_beep: longest wait for the beep or the greeting's end after a machine decision. */
        max_beep_wait_ms: Type.Integer({ minimum: 1000, maximum: 60_000, default: 20_000 }),
      },
      { ...strict, default: {} },
    ),
    providers: Type.Record(Type.String(), ProviderOverride, { default: {} }),
    shutdown: Type.Object({ drain_seconds: Type.Integer({ minimum: 0, default: 30 }) }, { ...strict, default: {} }),
    /** Storage failures (docs/RELIABILITY.md, storage failures and the CDR journal). */
    storage: Type.Object(
      {
        /** Longest a write waits for another connection's lock before it fails (SQLite busy_timeout): the most a held lock stalls the event loop. */
        busy_timeout_ms: Type.Integer({ minimum: 0, maximum: 60_000, default: 250 }),
        /** How often call records waiting in the CDR journal are written again while the database refuses them. */
        retry_seconds: Type.Number({ minimum: 0.1, maximum: 3600, default: 2 }),
        /**
         * The shared store (docs/ARCHITECTURE.md "Storage"): a `postgres://` URL for PostgreSQL;
         * absent, the embedded SQLite file in the data folder. The password is never logged.
         */
        url: Type.Optional(Type.String({ pattern: '^postgres(ql)?://', minLength: 12 })),
      },
      { ...strict, default: {} },
    ),
    /**
     * Process roles (docs/ARCHITECTURE.md "Process roles"): `all` runs everything in one process;
     * `api` the control API only (no SIP or RTP socket); `engine` SIP and media, health and
     * metrics, and the internal command endpoint. `api` and `engine` share one data folder.
     */
    role: StringEnum(['all', 'api', 'engine'], { default: 'all' }),
    /** This process's name among the engines; the host name plus the SIP port when absent. */
    node_id: Type.Optional(Type.String({ minLength: 1, maxLength: 200, pattern: '^[\\x21-\\x7e]+$' })),
    /** The engine's internal command endpoint (bearer `cluster.secret`), on loopback by default. */
    internal: Type.Object({ host: Type.String({ default: '127.0.0.1' }), port: Type.Integer({ minimum: 0, maximum: 65535, default: 8090 }) }, { ...strict, default: {} }),
    /** Shared by the `api` and `engine` processes; required unless `role` is `all`. Never logged. */
    cluster: Type.Object(
      {
        secret: Type.Optional(Type.String({ minLength: 16 })),
        /** The cluster's live state (docs/CLUSTER.md): a `redis://` URL; absent, the nodes table of the store. Never logged. */
        redis_url: Type.Optional(Type.String({ pattern: '^rediss?://', minLength: 9 })),
        /** Live calls this engine takes at most: new calls beyond it go to another engine (a node-level 503 for SIP). */
        capacity: Type.Integer({ minimum: 1, default: 500 }),
        /**
         * The SIP edge in front of the engines (docs/CLUSTER.md): its JSON-RPC URL (Kamailio `jsonrpcs`
         * over `xhttp`), where a draining engine disables itself; and this engine's destination in
         * the edge's dispatcher list, `sip:<sip.host>:<sip.port>` when absent.
         */
        edge: Type.Object(
          { rpc_url: Type.Optional(Type.String({ pattern: '^https?://', minLength: 8 })), destination: Type.Optional(Type.String({ pattern: '^sips?:', minLength: 5 })) },
          { ...strict, default: {} },
        ),
      },
      { ...strict, default: {} },
    ),
    /** The `api` role (docs/ARCHITECTURE.md "Process roles"). */
    api: Type.Object(
      {
        /**
         * How long a page of the live call list (`GET /v1/calls` without `state`) is served again
         * without reading the store; a tenant's own commands through this process drop its pages
         * at once. 0 reads the store on every request (docs/DECISIONS.md "The live call list of an api process").
         */
        live_list_cache_ms: Type.Integer({ minimum: 0, maximum: 10_000, default: 250 }),
      },
      { ...strict, default: {} },
    ),
    /** Where recordings are written and read; `<data_dir>/recordings` when absent. Stored paths are relative to it. */
    recordings: Type.Object({ dir: Type.Optional(Type.String({ minLength: 1 })) }, { ...strict, default: {} }),
    /** Call troubleshooting (docs/API.md "SIP trace of a call", docs/CONFIGURATION.md "Observability"). */
    observability: Type.Object(
      {
        sip_trace: Type.Object(
          {
            /** Keep every call's SIP messages; false records none. */
            enabled: Type.Boolean({ default: true }),
            retention_days: Type.Number({ minimum: 0.001, maximum: 3650, default: 7 }),
            /** Past this many octets of messages the oldest are dropped: the tail of the call is kept. */
            max_bytes_per_call: Type.Integer({ minimum: 4096, maximum: 16_777_216, default: 262_144 }),
          },
          { ...strict, default: {} },
        ),
        /** Optional HEP3 export of every SIP message (masked) to a Homer collector over UDP. */
        hep: Type.Optional(Type.Object({ host: Type.String({ minLength: 1 }), port: Port, id: Type.Integer({ minimum: 0, maximum: 4_294_967_295, default: 2001 }) }, strict)),
      },
      { ...strict, default: {} },
    ),
    /** Call events for tenants (docs/EVENTS.md, docs/CONFIGURATION.md "Call events"). */
    events: Type.Object(
      {
        retention_days: Type.Number({ minimum: 0.001, maximum: 3650, default: 30 }),
        /** Endpoints may be `http://` (development); `https://` only otherwise. */
        allow_http: Type.Boolean({ default: false }),
        /** Extra CAs (PEM file) trusted for endpoints' certificates: a private PKI. */
        ca_file: Type.Optional(Type.String({ minLength: 1 })),
        /** The sender's deliveries in flight: in all, per tenant and per endpoint. */
        max_in_flight: Type.Integer({ minimum: 1, maximum: 1024, default: 64 }),
        max_in_flight_per_tenant: Type.Integer({ minimum: 1, maximum: 1024, default: 16 }),
        /** Per endpoint whose last attempt failed (or timed out): a dead endpoint holds this many. */
        max_in_flight_per_endpoint: Type.Integer({ minimum: 1, maximum: 64, default: 2 }),
        /** Per endpoint whose last attempt succeeded (a new one counts as such). */
        max_in_flight_per_healthy_endpoint: Type.Integer({ minimum: 1, maximum: 64, default: 8 }),
        /** How often the sender scans the outbox for due deliveries (retries); new events are read as they are written. */
        poll_ms: Type.Integer({ minimum: 10, maximum: 60_000, default: 1000 }),
        /** An endpoint is flagged after this many deliveries failed for good in a row. */
        flag_after_failures: Type.Integer({ minimum: 1, maximum: 10_000, default: 5 }),
        /** Seconds between `: keepalive` comments on the live stream. */
        stream_keepalive_seconds: Type.Number({ minimum: 0.05, maximum: 300, default: 15 }),
      },
      { ...strict, default: {} },
    ),
  },
  strict,
);

export type Config = Static<typeof ConfigSchema>;
