/**
 * @module The stereo recording (docs/CONSOLE.md "Call detail"): its waveform drawn from the audio
 * the browser decodes (Web Audio `decodeAudioData` on the WAV), one row per channel, labelled
 * (left: the remote party, right: the agent); an `<audio>` element plays the same bytes (a blob:
 * URL) with play/pause and a seek slider; the transcript's turns seek it.
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import { fetchBytes } from '../api.js';
import { clock, messageOf } from '../components.js';
import type { Transcript } from '../types.js';

const CHANNELS = ['Remote party (left)', 'Agent (right)'];
const WIDTH = 800;
const HEIGHT = 70;

/** Peak per pixel column of one channel. */
function peaks(samples: Float32Array, columns: number): Float32Array {
  const out = new Float32Array(columns);
  const per = Math.max(1, Math.floor(samples.length / columns));
  for (let c = 0; c < columns; c++) {
    let peak = 0;
    for (let i = c * per; i < Math.min(samples.length, (c + 1) * per); i++) peak = Math.max(peak, Math.abs(samples[i]!));
    out[c] = peak;
  }
  return out;
}

function drawWave(canvas: HTMLCanvasElement, samples: Float32Array, played: number): void {
  const g = canvas.getContext('2d');
  if (!g) return;
  const p = peaks(samples, WIDTH);
  g.clearRect(0, 0, WIDTH, HEIGHT);
  for (let c = 0; c < WIDTH; c++) {
    const h = Math.max(1, p[c]! * (HEIGHT - 4));
    g.fillStyle = c / WIDTH < played ? '#1d5fbf' : '#8a97a8';
    g.fillRect(c, (HEIGHT - h) / 2, 1, h);
  }
}

export function RecordingPlayer({ callId, transcript }: { callId: string; transcript: Transcript | null }) {
  const src = `/v1/calls/${callId}/recording`;
  const audio = useRef<HTMLAudioElement>(null);
  const canvases = [useRef<HTMLCanvasElement>(null), useRef<HTMLCanvasElement>(null)];
  const [channels, setChannels] = useState<Float32Array[] | null>(null);
  const [audioUrl, setAudioUrl] = useState<string | undefined>(undefined);
  const [error, setError] = useState<string | null>(null);
  const [playing, setPlaying] = useState(false);
  const [time, setTime] = useState(0);
  const [duration, setDuration] = useState(0);

  useEffect(() => {
    let stale = false;
    let url: string | null = null;
    (async () => {
      const blob = await fetchBytes(src, 'audio/*');
      // The audio element plays the bytes already fetched for the waveform: seeking needs no
      // range requests, and the file is read once.
      url = URL.createObjectURL(blob);
      if (stale) return;
      setAudioUrl(url);
      // An offline context decodes without a user gesture and without opening an audio device.
      const decoded = await new OfflineAudioContext(1, 1, 8000).decodeAudioData(await blob.arrayBuffer());
      if (stale) return;
      setDuration(decoded.duration);
      setChannels(Array.from({ length: decoded.numberOfChannels }, (_, i) => decoded.getChannelData(i)));
    })().catch((err: unknown) => setError(`The recording could not be decoded: ${messageOf(err)}`));
    return () => {
      stale = true;
      if (url) URL.revokeObjectURL(url);
    };
  }, [src]);

  useEffect(() => {
    if (!channels) return;
    channels.slice(0, 2).forEach((samples, i) => {
      const canvas = canvases[i]?.current;
      if (canvas) drawWave(canvas, samples, duration ? time / duration : 0);
    });
  }, [channels, time, duration]);

  const seek = (seconds: number): void => {
    if (!audio.current) return;
    audio.current.currentTime = Math.min(Math.max(0, seconds), duration || seconds);
    setTime(audio.current.currentTime);
  };
  const toggle = (): void => {
    const el = audio.current!;
    if (el.paused) void el.play().catch((err: unknown) => setError(messageOf(err)));
    else el.pause();
  };

  return (
    <div class="recording">
      <audio ref={audio} src={audioUrl} preload="auto" onPlay={() => setPlaying(true)} onPause={() => setPlaying(false)}
        onTimeUpdate={(e) => setTime(e.currentTarget.currentTime)} onLoadedMetadata={(e) => { if (Number.isFinite(e.currentTarget.duration)) setDuration(e.currentTarget.duration); }} />
      {error && <p class="error" role="alert">{error}</p>}
      {channels === null && !error && <p>Decoding the recording…</p>}
      {channels && channels.slice(0, 2).map((_, i) => (
        <figure key={i} class="wave">
          <figcaption>{channels.length === 1 ? 'Mono' : CHANNELS[i]}</figcaption>
          <canvas ref={canvases[i]} width={WIDTH} height={HEIGHT} role="img" aria-label={`Waveform, ${channels.length === 1 ? 'mono' : CHANNELS[i]}`}
            onClick={(e) => { const r = e.currentTarget.getBoundingClientRect(); seek(((e.clientX - r.left) / r.width) * duration); }} />
        </figure>
      ))}
      <div class="controls">
        <button type="button" onClick={toggle} aria-label={playing ? 'Pause the recording' : 'Play the recording'}>{playing ? 'Pause' : 'Play'}</button>
        <label class="seek">Position
          <input type="range" min={0} max={duration || 0} step={0.1} value={time} aria-valuetext={`${clock(time)} of ${clock(duration)}`}
            onInput={(e) => seek(Number(e.currentTarget.value))} />
        </label>
        <output aria-live="off">{clock(time)} / {clock(duration)}</output>
      </div>
      {transcript && (
        <section aria-labelledby="transcript-title">
          <h3 id="transcript-title">Transcript ({transcript.source})</h3>
          <ol class="transcript">
            {transcript.turns.map((turn, i) => (
              <li key={i} class={turn.role}>
                <button type="button" class="link" onClick={() => { seek(turn.offset_s); }} aria-label={`Play from ${clock(turn.offset_s)}: ${turn.role}`}>{clock(turn.offset_s)}</button>
                <span class="role">{turn.role}</span> <span class="text">{turn.text}</span>
              </li>
            ))}
          </ol>
        </section>
      )}
    </div>
  );
}
