// The table's sounds: off unless the reader turns them on (a choice kept in this browser). Made
// with the Web Audio API, a few oscillator notes each: no sound file is downloaded, nothing is
// loaded from elsewhere.

const KEY = "hearts.sound";
let context = null;

export const soundOn = () => localStorage.getItem(KEY) === "on";

// Turning sound on is a click: the one moment a browser lets a page start its audio.
export function setSound(on) {
  localStorage.setItem(KEY, on ? "on" : "off");
  if (on) audio()?.resume?.();
}

function audio() {
  if (!context) {
    const Context = window.AudioContext ?? window.webkitAudioContext;
    if (!Context) return null;
    context = new Context();
  }
  return context;
}

// One note: a frequency sliding to `to`, a quick attack and an exponential fade.
function note(ctx, { at = 0, freq, to = freq, length = 0.12, type = "sine", gain = 0.15 }) {
  const start = ctx.currentTime + at;
  const osc = ctx.createOscillator();
  const amp = ctx.createGain();
  osc.type = type;
  osc.frequency.setValueAtTime(freq, start);
  osc.frequency.exponentialRampToValueAtTime(to, start + length);
  amp.gain.setValueAtTime(0.0001, start);
  amp.gain.exponentialRampToValueAtTime(gain, start + 0.01);
  amp.gain.exponentialRampToValueAtTime(0.0001, start + length);
  osc.connect(amp).connect(ctx.destination);
  osc.start(start);
  osc.stop(start + length + 0.02);
}

const SOUNDS = {
  // A card laid on the felt: a short, low knock.
  play: (ctx, at) => note(ctx, { at, freq: 220, to: 90, length: 0.09, type: "triangle", gain: 0.25 }),
  // A trick gathered: a soft falling sweep.
  take: (ctx, at) => note(ctx, { at, freq: 520, to: 260, length: 0.22, type: "sine", gain: 0.12 }),
  // Cards passed: two quick rising notes.
  pass: (ctx, at) => {
    note(ctx, { at, freq: 330, length: 0.08, type: "triangle" });
    note(ctx, { at: at + 0.09, freq: 440, length: 0.1, type: "triangle" });
  },
  // Your turn: a two-note chime.
  turn: (ctx, at) => {
    note(ctx, { at, freq: 660, length: 0.14 });
    note(ctx, { at: at + 0.12, freq: 880, length: 0.2 });
  },
};

// Plays a sound by name, `at` seconds from now; nothing when sound is off or unsupported.
export function sound(name, at = 0) {
  if (!soundOn()) return;
  const ctx = audio();
  if (!ctx || ctx.state === "closed") return;
  try {
    SOUNDS[name]?.(ctx, at);
  } catch {
    // A sound that cannot play is no reason to stop the game.
  }
}
