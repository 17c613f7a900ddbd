/**
 * Prometheus naming conventions (prometheus.io "Metric and label naming", as `promtool check
 * metrics` lints them): every vgw_ metric is snake_case, counters end in `_total` and nothing else
 * does, time is in `_seconds` (never ms), ratios in `_ratio`, each has help text; label sets are
 * bounded: no call id, no phone number, no label named after an id. Checked on the /metrics of a
 * gateway that carried a call, and with Debian's promtool (prometheus package) where installed.
 */
import { spawnSync } from 'node:child_process';
import t from 'tap';
import { FakeCustomAgent } from '../support/fake-agent-servers/custom-agent-server.js';
import { startTestGateway, waitFor } from '../support/gateway-harness.js';
import { havePeer, peerPath } from '../support/peers.js';

t.test('metrics: names, units, help and bounded labels follow the Prometheus conventions', async (t) => {
  const gw = await startTestGateway(t, { yaml: 'calls:\n  allow_private_agent_urls: true' });
  const bot = await FakeCustomAgent.start();
  t.teardown(() => bot.core.close());
  const id = (await gw.api('POST', '/v1/calls', { from: '+15550100', to: '+15550199', carrier: 'sandbox', agent_ws_url: bot.url })).body.id;
  await waitFor('the call answered', async () => (await gw.api('GET', `/v1/calls/${id}`)).body.state === 'active');
  t.equal((await gw.api('POST', `/v1/calls/${id}/hangup`)).status, 200);
  await waitFor('the call ended', async () => (await gw.api('GET', `/v1/calls/${id}`)).body.state === 'ended');
  const text = await (await fetch(`${gw.base}/metrics`)).text();

  const types = new Map([...text.matchAll(/^# TYPE (\S+) (\S+)$/gm)].map((m) => [m[1]!, m[2]!]));
  const helps = new Set([...text.matchAll(/^# HELP (\S+) \S/gm)].map((m) => m[1]!));
  const ours = [...types].filter(([name]) => name.startsWith('vgw_') && !name.startsWith('vgw_nodejs_') && !name.startsWith('vgw_process_'));
  t.ok(ours.length >= 15, `${ours.length} gateway metrics`);
  for (const expected of ['vgw_calls_active', 'vgw_call_outcomes_total', 'vgw_call_setup_seconds', 'vgw_call_post_dial_delay_seconds', 'vgw_agent_first_audio_seconds',
    'vgw_rtp_port_pairs', 'vgw_sip_messages_total', 'vgw_call_mos', 'vgw_call_jitter_seconds', 'vgw_call_packet_loss_ratio', 'vgw_carrier_up', 'vgw_nodejs_eventloop_lag_seconds',
    'vgw_agent_connect_seconds', 'vgw_agent_connect_failures_total', 'vgw_rtp_relayed_packets_total', 'vgw_rtp_packets_lost_total', 'vgw_agent_frames_dropped_total', 'vgw_webhook_ingestions_total',
    'vgw_event_delivery_attempts_total', 'vgw_event_delivery_delay_seconds', 'vgw_event_deliveries_in_flight']) {
    t.ok(types.has(expected), `${expected} is exported`);
  }
  for (const [name, type] of ours) {
    t.match(name, /^vgw_[a-z][a-z0-9_]*[a-z0-9]$/, `${name}: snake_case`);
    t.ok(helps.has(name), `${name}: help text`);
    t.equal(name.endsWith('_total'), type === 'counter', `${name}: _total if and only if a counter`);
    t.notMatch(name, /_(ms|milliseconds|millis|minutes|hours|kb|kib|percent)(_|$)/, `${name}: base units only`);
  }
  // Bounded labels: no id-like label names, no value that is a call id, a token or a number.
  const samples = [...text.matchAll(/^(vgw_\w+)\{([^}]*)\}/gm)];
  for (const [, name, labels] of samples) {
    for (const [, key, value] of labels!.matchAll(/(\w+)="([^"]*)"/g)) {
      t.notMatch(key, /(^|_)(id|call|uri|number|from|to)$/, `${name}: label ${key} is not an identifier`);
      if (key !== 'le' && key !== 'quantile' && key !== 'version') t.notMatch(value, /^(call_|ten_|\+?\d{5,})/, `${name}{${key}="${value}"}: not an id or a number`);
    }
  }
  t.match(text, /^vgw_calls_active\{direction="inbound",carrier="sandbox"\} 0$/m, 'a series at 0 is kept');
  t.match(text, /^vgw_call_outcomes_total\{direction="outbound",carrier="sandbox",end_reason="completed"\} 1$/m);
  t.match(text, /^vgw_sip_messages_total\{direction="sent",method="INVITE",class="request"\} [1-9]/m);
  t.match(text, /^vgw_sip_messages_total\{direction="received",method="response",class="2xx"\} [1-9]/m);

  if (havePeer(t, 'promtool check metrics', 'promtool')) {
    const lint = spawnSync(peerPath('promtool')!, ['check', 'metrics'], { input: text, encoding: 'utf8' });
    // prom-client's own default metrics (vgw_nodejs_*: gauges such as active_handles_total) are
    // named by the library, not here; promtool's remarks on them are left out, ours must be none.
    const said = `${lint.stdout}${lint.stderr}`.split('\n').filter((line) => line.trim() !== '' && !/^vgw_(nodejs|process)_/.test(line));
    t.same(said, [], 'promtool finds nothing to say about the gateway\'s metrics');
  }
});

t.test('docs/grafana-dashboard.json: valid JSON whose queries name only metrics the gateway exports', async (t) => {
  const { readFileSync } = await import('node:fs');
  const dashboard = JSON.parse(readFileSync(new URL('../../docs/grafana-dashboard.json', import.meta.url), 'utf8')) as { panels: { title: string; targets: { expr: string }[] }[] };
  const gw = await startTestGateway(t, {});
  const text = await (await fetch(`${gw.base}/metrics`)).text();
  const exported = new Set([...text.matchAll(/^# TYPE (\S+) (\S+)$/gm)].flatMap((m) => m[2] === 'histogram' ? [`${m[1]}_bucket`, `${m[1]}_sum`, `${m[1]}_count`] : [m[1]!]));
  t.ok(dashboard.panels.length >= 10);
  for (const panel of dashboard.panels) {
    for (const target of panel.targets) {
      for (const [name] of target.expr.matchAll(/\bvgw_\w+/g)) t.ok(exported.has(name), `${panel.title}: ${name} is exported`);
    }
  }
});
