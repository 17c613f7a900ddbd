import t from 'tap';
import { agentSessionContract, openFor } from '../agent-session-contract.js';
import { customSubject as subject, FakeCustomAgent, startedCustomSession as started } from '../../../test/support/fake-agent-servers/custom-agent-server.js';

t.test('AgentSession contract', (t) => {
  agentSessionContract(t, subject);
  t.end();
});

t.test('docs/API.md "Agent WebSocket protocol": connected, then start with the call as customParameters and µ-law 8000 mono', async (t) => {
  const { fake, session } = await started(t);
  const [connected, start] = fake.core.jsonMessages();
  t.same(connected, { event: 'connected', protocol: 'Call', version: '1.0.0' });
  t.match(start, {
    event: 'start',
    sequenceNumber: '1',
    streamSid: session.streamSid,
    start: {
      streamSid: session.streamSid,
      callSid: 'call_contract01',
      tracks: ['inbound'],
      customParameters: { call_id: 'call_contract01', call_control_id: 'v3:contract01', from: '+15550001111', to: '+15550002222', direction: 'inbound' },
      mediaFormat: { encoding: 'audio/x-mulaw', sampleRate: 8000, channels: 1 },
    },
  });
  t.match(session.streamSid, /^MZ[0-9a-f]{32}$/);
});

t.test('docs/API.md "Caller verification": an inbound call\'s STIR/SHAKEN report is in start.customParameters, as strings', async (t) => {
  const { fake } = await started(t, { verification: { verstat: 'TN-Validation-Passed', identityHeader: true } });
  const start = fake.core.jsonMessages()[1] as { start: { customParameters: Record<string, unknown> } };
  t.match(start.start.customParameters, { verstat: 'TN-Validation-Passed', identity_header: 'true' });
  const none = await started(t, { verification: { verstat: null, identityHeader: false } });
  t.match((none.fake.core.jsonMessages()[1] as typeof start).start.customParameters, { verstat: '', identity_header: 'false' }, 'none reported: empty and false');
  const outbound = await started(t, { direction: 'outbound' });
  const params = (outbound.fake.core.jsonMessages()[1] as typeof start).start.customParameters;
  t.notOk('verstat' in params || 'identity_header' in params, 'an outbound call has no caller verification to report');
});

t.test('docs/API.md "SIP headers carried through": carried headers as start.customParameters.sip_headers, the tenant\'s custom_parameters beside the gateway\'s keys, which they cannot replace', async (t) => {
  const inbound = await started(t, { sipHeaders: { 'X-Campaign': 'spring-42', Diversion: '<sip:+15550111@carrier.example>;reason=unconditional' } });
  const start = inbound.fake.core.jsonMessages()[1] as { start: { customParameters: Record<string, unknown> } };
  t.same(start.start.customParameters.sip_headers, { 'X-Campaign': 'spring-42', Diversion: '<sip:+15550111@carrier.example>;reason=unconditional' });
  const outbound = await started(t, { direction: 'outbound', customParameters: { customer_tier: 'gold', call_id: 'spoofed' } });
  const params = (outbound.fake.core.jsonMessages()[1] as typeof start).start.customParameters;
  t.equal(params.customer_tier, 'gold');
  t.equal(params.call_id, 'call_contract01', 'the gateway\'s own key wins');
  t.notOk('sip_headers' in params, 'none carried on an outbound call');
});

t.test('Twilio media: track inbound, chunk, timestamp and sequenceNumber are strings counting up', async (t) => {
  const { fake, session } = await started(t);
  session.sendAudio(Buffer.alloc(160, 0xff));
  session.sendAudio(Buffer.alloc(160, 0x7f));
  await fake.core.until(() => fake.events().filter((e) => e === 'media').length === 2);
  const media = fake.core.jsonMessages().filter((m) => m.event === 'media');
  t.match(media[0], { sequenceNumber: '2', streamSid: session.streamSid, media: { track: 'inbound', chunk: '1', timestamp: /^\d+$/ } });
  t.match(media[1], { sequenceNumber: '3', media: { track: 'inbound', chunk: '2' } });
  // The frame is written out by hand: it must be the text JSON.stringify gives for the message.
  const expected = (n: number, payload: Buffer): string => JSON.stringify({
    event: 'media', sequenceNumber: String(n + 1), streamSid: session.streamSid,
    media: { track: 'inbound', chunk: String(n), timestamp: (media[n - 1]!.media as { timestamp: string }).timestamp, payload: payload.toString('base64') },
  });
  t.same(fake.core.textFrames().filter((f) => f.includes('"event":"media"')), [expected(1, Buffer.alloc(160, 0xff)), expected(2, Buffer.alloc(160, 0x7f))]);
});

t.test('Twilio dtmf: a digit is sent on the inbound track; a non-digit is refused', async (t) => {
  const { fake, session } = await started(t);
  t.equal(session.sendDtmf('x'), false);
  t.equal(session.sendDtmf('#'), true);
  await fake.core.until(() => fake.events().includes('dtmf'));
  t.match(fake.core.jsonMessages().find((m) => m.event === 'dtmf'), { streamSid: session.streamSid, dtmf: { track: 'inbound_track', digit: '#' } });
});

t.test('Twilio mark: the agent mark surfaces in order with audio and is echoed when played', async (t) => {
  const { fake, session, recorder } = await started(t);
  fake.sendAudio(Buffer.alloc(160, 1));
  fake.sendMark('greeting-done');
  await recorder.until(() => recorder.marks.length === 1);
  t.equal(recorder.audio.length, 1, 'audio before the mark came first');
  t.same(recorder.marks, ['greeting-done']);
  session.markPlayed('greeting-done');
  await fake.core.until(() => fake.events().includes('mark'));
  t.match(fake.core.jsonMessages().find((m) => m.event === 'mark'), { streamSid: session.streamSid, mark: { name: 'greeting-done' } });
});

t.test('docs/API.md "Agent WebSocket protocol": hold and unhold events bracket a pause in caller audio', async (t) => {
  const { fake, session } = await started(t);
  session.hold();
  session.sendAudio(Buffer.alloc(160, 1));
  session.unhold();
  session.sendAudio(Buffer.alloc(160, 2));
  await fake.core.until(() => fake.events().includes('media'));
  t.same(fake.events().slice(2), ['hold', 'unhold', 'media']);
  t.same(fake.receivedAudio(), Buffer.alloc(160, 2), 'held audio was not sent');
  t.same(fake.core.jsonMessages().filter((m) => m.event === 'hold' || m.event === 'unhold').map((m) => m.source), ['api', 'api'], 'an API hold says source api');
});

t.test('docs/PROVIDERS.md hold events: a hold by the remote party itself says source remote', async (t) => {
  const { fake, session } = await started(t);
  session.hold('remote');
  session.unhold('remote');
  await fake.core.until(() => fake.events().includes('unhold'));
  t.match(fake.core.jsonMessages().filter((m) => m.event === 'hold' || m.event === 'unhold'), [
    { event: 'hold', source: 'remote', streamSid: session.streamSid },
    { event: 'unhold', source: 'remote', streamSid: session.streamSid },
  ]);
});

t.test('docs/API.md "Agent WebSocket protocol": the call ending sends stop, then closes the socket', async (t) => {
  const { fake, session } = await started(t);
  session.close('caller hung up');
  await fake.core.until(() => fake.core.closedWith !== undefined);
  t.match(fake.core.jsonMessages().at(-1), { event: 'stop', streamSid: session.streamSid, stop: { callSid: 'call_contract01' } });
});

t.test('RFC 6455 §7.4.1: an abnormal close from the agent is reported as an error', async (t) => {
  const { fake, recorder } = await started(t);
  fake.core.closeSocket(1011, 'internal');
  await recorder.until(() => recorder.closes.length > 0);
  t.same(recorder.closes, [{ by: 'error', code: 1011, reason: 'internal' }]);
});

t.test('close() before the agent is ready rejects start and reports no onClose', async (t) => {
  const fake = await FakeCustomAgent.start();
  t.teardown(() => fake.core.close());
  const { session, recorder } = openFor(t, subject, fake, { apiKey: undefined });
  const starting = session.start().then(() => undefined, (e: unknown) => e);
  session.close('caller gave up');
  t.match(await starting, { name: 'ProviderError', provider: 'custom' });
  t.same(recorder.closes, []);
  session.sendAudio(Buffer.alloc(160));
  t.equal(session.sendDtmf('1'), false, 'commands after close do nothing');
});

t.test('a text frame that is not JSON is logged and ignored; the session stays up', async (t) => {
  const { fake, session, recorder } = await started(t);
  fake.core.socket?.send('not json');
  fake.sendAudio(Buffer.alloc(160, 3));
  await recorder.until(() => recorder.audio.length === 1);
  t.ok(recorder.logs.some((l) => l.startsWith('warn') && l.includes('not a JSON object')));
  t.equal(session.sendDtmf('5'), true);
});

t.test('docs/API.md "Agent WebSocket protocol": transfer and hangup events reach the call; a transfer without a usable to is still asked for, as an empty target the call refuses', async (t) => {
  const { fake, recorder } = await started(t);
  const asked: string[] = [];
  let hangups = 0;
  recorder.handlers.onTransfer = (to) => asked.push(to);
  recorder.handlers.onHangup = () => (hangups += 1);
  fake.transfer('+15550142');
  fake.transfer('sip:desk@pbx.example.com');
  fake.transfer(42);
  fake.transfer('x'.repeat(600));
  fake.hangup();
  await new Promise<void>((resolve) => { const check = setInterval(() => { if (hangups > 0) { clearInterval(check); resolve(); } }, 10); });
  t.same(asked, ['+15550142', 'sip:desk@pbx.example.com', '', ''], 'each transfer in order, unusable targets as empty');
  t.equal(hangups, 1, 'one hangup');
});
