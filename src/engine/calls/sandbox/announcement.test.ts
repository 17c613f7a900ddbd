import t from 'tap';
import { needPeer } from '../../../../test/support/peers.js';
import { loadAnnouncement, toneAnnouncement } from './announcement.js';

const rms = (pcm: Int16Array): number => Math.sqrt(pcm.reduce((s, x) => s + x * x, 0) / Math.max(1, pcm.length));

t.test('without flite the announcement is the tone sequence, 8 kHz and under 3 s', async (t) => {
  const pcm = await loadAnnouncement('Welcome to the sandbox.', { flite: '/nonexistent/flite' });
  t.same(pcm, toneAnnouncement(), 'falls back to the tones');
  t.ok(pcm.length > 0 && pcm.length <= 3 * 8000);
  t.ok(rms(pcm) > 1000, 'audible');
  t.same(await loadAnnouncement('   '), toneAnnouncement(), 'empty text also gives the tones');
});

t.test('with flite the text is spoken as 8 kHz PCM, cut to at most 3 s', async (t) => {
  if (!needPeer(t, 'flite')) return;
  const short = await loadAnnouncement('Hello.');
  t.ok(short.length > 0.2 * 8000 && short.length < 2 * 8000, `a short word is a short clip (${short.length} samples at 8 kHz)`);
  t.ok(rms(short) > 200, 'it is not silence');
  t.not(short.length, toneAnnouncement().length, 'and not the fallback tones');
  const long = await loadAnnouncement('This sentence is far too long to be played in full as the sandbox announcement, so it is cut.');
  t.equal(long.length, 3 * 8000, 'cut at 3 s');
  t.equal(long[long.length - 1], 0, 'faded out at the cut');
});
