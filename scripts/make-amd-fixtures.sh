#!/bin/sh
# Builds the labelled answering-machine-detection set (docs/PERFORMANCE.md "Answering-machine
# detection") into DIR: 8 kHz mono 16-bit WAV clips as a callee's side of an answered call, and
# DIR/labels.tsv (file, label: human, machine, fax or unknown). Needs flite, espeak-ng and sox
# (Debian packages of the same names). Deterministic: the same tools give the same clips.
# usage: scripts/make-amd-fixtures.sh DIR
set -eu
DIR=${1:?usage: make-amd-fixtures.sh DIR}
mkdir -p "$DIR"
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
LABELS="$DIR/labels.tsv"
: > "$LABELS"
N=0

# speak VOICE TEXT OUT: flite voices by name, espeak-ng ones as espeak:NAME; 8 kHz mono.
speak() {
  case "$1" in
    espeak:*) espeak-ng -v "${1#espeak:}" -s 165 -w "$TMP/raw.wav" "$2" ;;
    *) flite -voice "$1" -t "$2" -o "$TMP/raw.wav" ;;
  esac
  sox -q "$TMP/raw.wav" -r 8000 -c 1 -b 16 "$3" norm -3
}

# clip LABEL LEAD_S TAIL_S NOISE WAV...: LEAD_S of silence, the parts, TAIL_S of silence, and
# white noise at NOISE (0 for none, else its amplitude, e.g. 0.01) under all of it.
clip() {
  label=$1 lead=$2 tail=$3 noise=$4
  shift 4
  N=$((N + 1))
  out=$(printf '%s/%03d-%s.wav' "$DIR" "$N" "$label")
  sox -q -n -r 8000 -c 1 -b 16 "$TMP/lead.wav" trim 0 "$lead"
  sox -q -n -r 8000 -c 1 -b 16 "$TMP/tail.wav" trim 0 "$tail"
  sox -q "$TMP/lead.wav" "$@" "$TMP/tail.wav" "$TMP/clean.wav"
  if [ "$noise" = 0 ]; then cp "$TMP/clean.wav" "$out"
  else
    len=$(soxi -D "$TMP/clean.wav")
    sox -q -n -r 8000 -c 1 -b 16 "$TMP/noise.wav" synth "$len" whitenoise vol "$noise"
    sox -q -m "$TMP/clean.wav" "$TMP/noise.wav" "$out"
  fi
  printf '%s\t%s\n' "$(basename "$out")" "$label" >> "$LABELS"
}

VOICES="kal slt rms awb espeak:en-us espeak:en"
HUMAN_1="Hello?"
HUMAN_2="Yes, who is this?"
HUMAN_3="Hello, speaking."
HUMAN_4="Hi, this is Mark."

# Humans: a short answer, then silence while they wait for the caller (24 clips).
i=0
for v in $VOICES; do
  for text in "$HUMAN_1" "$HUMAN_2" "$HUMAN_3" "$HUMAN_4"; do
    i=$((i + 1))
    speak "$v" "$text" "$TMP/h.wav"
    noise=0; [ $((i % 3)) = 0 ] && noise=0.02
    clip human "0.$((2 + i % 6))" 5 "$noise" "$TMP/h.wav"
  done
done

# Voicemail greetings of several lengths, with and without a beep after them (24 clips).
G1="Hi, you have reached the voicemail of John Smith. Please leave a message after the tone."
G2="The person you are calling is not available. At the tone, please record your message. When you have finished recording, you may hang up."
G3="Hello, this is Sarah. I can't take your call right now, but leave your name and number and I will call you back as soon as I can. Thanks."
G4="You have reached the office of Doctor Brown. Our office hours are Monday to Friday, nine to five. Please leave a detailed message."
sox -q -n -r 8000 -c 1 -b 16 "$TMP/beep.wav" synth 0.5 sine 1000 vol 0.5
sox -q -n -r 8000 -c 1 -b 16 "$TMP/gap.wav" trim 0 0.4
i=0
for v in $VOICES; do
  for text in "$G1" "$G2" "$G3" "$G4"; do
    i=$((i + 1))
    speak "$v" "$text" "$TMP/g.wav"
    noise=0; [ $((i % 4)) = 0 ] && noise=0.015
    if [ $((i % 2)) = 0 ]; then clip machine 0.3 2 "$noise" "$TMP/g.wav" "$TMP/gap.wav" "$TMP/beep.wav"
    else clip machine 0.4 2 "$noise" "$TMP/g.wav"; fi
  done
done

# Fax machines calling tone (ITU-T T.30 CNG: 1100 Hz, 0.5 s on, 3 s off), 6 clips.
for i in 1 2 3 4 5 6; do
  sox -q -n -r 8000 -c 1 -b 16 "$TMP/cng.wav" synth 0.5 sine 1100 vol 0.3
  sox -q -n -r 8000 -c 1 -b 16 "$TMP/off.wav" trim 0 3
  noise=0; [ "$i" -gt 3 ] && noise=0.01
  clip fax "0.$i" 0 "$noise" "$TMP/cng.wav" "$TMP/off.wav" "$TMP/cng.wav" "$TMP/off.wav"
done

# Silence, or line noise only: nothing to decide on (6 clips).
for i in 1 2 3 4 5 6; do
  noise=0; [ "$i" -gt 2 ] && noise="0.00$i"
  sox -q -n -r 8000 -c 1 -b 16 "$TMP/s.wav" trim 0 2
  clip unknown 3 3 "$noise" "$TMP/s.wav"
done

echo "$N clips in $DIR" >&2
