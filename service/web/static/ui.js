// What every page shares: the one way to write markup (html`...` and render), the problem
// banner, the connection badge, seat names.

import { ApiError } from "./api.js";

export const $ = (selector, root = document) => root.querySelector(selector);

// Markup is written in one way only: html`<b>${value}</b>`. Every interpolated value is
// escaped and so shows as text (a name like "<img onerror=...>" is shown, never parsed), except
// markup made by html`...` itself (an Html), and arrays of either. render() is the one place
// that writes markup into the page and accepts nothing else, so a plain string with data in it
// cannot reach innerHTML (issue 22: the scoreboard wrote a game id from the URL as HTML).
// Attribute values must be quoted in the templates ("${value}"): escaping covers both quotes.
class Html {
  constructor(text) {
    this.text = text;
  }
}

const ESCAPES = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;", "`": "&#96;" };

export function escapeHtml(text) {
  return String(text ?? "").replace(/[&<>"'`]/g, (c) => ESCAPES[c]);
}

function fragment(value) {
  if (value instanceof Html) return value.text;
  if (Array.isArray(value)) return value.map(fragment).join("");
  if (value == null || value === false) return "";
  return escapeHtml(value);
}

export function html(strings, ...values) {
  let text = strings[0];
  values.forEach((value, i) => {
    text += fragment(value) + strings[i + 1];
  });
  return new Html(text);
}

// Replaces the element's content with markup made by html`...`.
export function render(element, content) {
  if (!(content instanceof Html)) throw new TypeError("render() takes html`...` markup only");
  element.innerHTML = content.text;
}

// An element with its text (as text, never markup) and class: the DOM-call pages' builder.
export function el(tag, text, className) {
  const node = document.createElement(tag);
  if (text !== undefined) node.textContent = text;
  if (className) node.className = className;
  return node;
}

// A labelled <select> named ``name`` of [value, text] options, ``chosen`` selected.
export function labelledSelect(label, name, options, chosen) {
  const wrap = el("label", `${label} `);
  const box = el("select");
  box.name = name;
  for (const [value, text] of options) {
    const option = el("option", text);
    option.value = value;
    option.selected = value === chosen;
    box.append(option);
  }
  wrap.append(box);
  return wrap;
}

// A path segment for a link inside the page (#/replay/ID/N): ids are checked by the router,
// and encoded here too so that no value can add a segment or a query.
export const segment = (value) => encodeURIComponent(String(value));

export function showProblem(error) {
  const problem =
    error instanceof ApiError ? error.problem : { title: "Error", detail: String(error?.message ?? error) };
  const box = $("#problem");
  $(".title", box).textContent = problem.title;
  $(".detail", box).textContent = problem.detail ?? "";
  box.dataset.code = problem.code ?? "";
  showRetry(box, error?.retryAfter);
  box.hidden = false;
  // The box sits above the page: a reader scrolled down to the form they sent still sees it.
  box.scrollIntoView?.({ block: "nearest" });
}

export function clearProblem() {
  showRetry($("#problem"), null);
  $("#problem").hidden = true;
}

// A 429 or 503 the page gave up waiting for (longer than api.js waits): when the request may be
// sent again, counted down, so the reader knows when to try (issue 34: the retry time was in the
// server's detail only, and not at all when a proxy answered).
let retryTimer = null;

function showRetry(box, seconds) {
  clearInterval(retryTimer);
  retryTimer = null;
  const line = $(".retry", box);
  line.hidden = seconds == null || !Number.isFinite(seconds);
  if (line.hidden) return;
  const until = Date.now() + seconds * 1000;
  const at = new Date(until).toLocaleTimeString();
  const tick = () => {
    const left = Math.ceil((until - Date.now()) / 1000);
    line.dataset.seconds = String(Math.max(0, left));
    if (left > 0) {
      line.textContent = `Try again in ${left} s (at ${at}).`;
      return;
    }
    line.textContent = "You can try again now.";
    clearInterval(retryTimer);
    retryTimer = null;
  };
  tick();
  if (seconds > 0) retryTimer = setInterval(tick, 1000);
}

// "live", "lost" (retrying), "failed", or null to hide the badge.
export function setConnection(state, problem) {
  const badge = $("#connection");
  badge.hidden = state == null;
  badge.dataset.state = state ?? "";
  badge.textContent =
    state === "live" ? "● live" : state === "lost" ? `○ ${lostText(problem)}` : "× offline";
  badge.title = problem ? `${problem.title}: ${problem.detail ?? ""}` : "";
}

// A lost stream's badge: when it tries again, and why when the server said (a 429's title).
function lostText(problem) {
  const when = problem?.detail ?? "reconnecting";
  return problem?.title && problem.title !== "Connection lost" ? `${problem.title}: ${when}` : when;
}

// Where each seat sits, clockwise from the viewer (at the bottom), for 3 to 6 players: the
// classes the felt's and the trick's grids place (style.css).
const LAYOUTS = {
  3: ["bottom", "left", "right"],
  4: ["bottom", "left", "top", "right"],
  5: ["bottom", "left", "top-left", "top-right", "right"],
  6: ["bottom", "left", "top-left", "top", "top-right", "right"],
};

export function seatPositions(players) {
  return LAYOUTS[players] ?? LAYOUTS[4];
}

// The seat a pass in `direction` goes to from `seat` (domain/passing.py pass_target), or null.
export function passTarget(direction, seat, players) {
  const offset = { left: 1, right: players - 1, across: Math.floor(players / 2) }[direction];
  return offset == null ? null : (seat + offset) % players;
}

// A seat as the page names it. A bot's own seat is stored under the bot's name ("random"), so
// three of them would read alike: the page names them apart ("Random bot (seat 2)"), the stored
// name unchanged; a person's seat handed to a bot keeps the person's name.
export function seatName(seats, seat) {
  const info = seats?.[seat];
  if (!info) return `seat ${seat}`;
  if (info.bot && (info.name == null || info.name === info.bot)) {
    return `${info.bot.charAt(0).toUpperCase()}${info.bot.slice(1)} bot (seat ${seat})`;
  }
  return info.name ?? `seat ${seat} (open)`;
}

// The bots' levels for people, weakest first, and the one a person's table offers first
// (bots/levels.py defines them; tests/web/test_levels.py checks that these agree). The
// strategies' own names, which seats took before the levels, play at a level too.
export const LEVELS = ["beginner", "casual", "strong", "master"];
export const DEFAULT_LEVEL = "strong";
const STRATEGY_LEVEL = { random: "beginner", heuristic: "casual", montecarlo: "strong" };

export function botLevel(bot) {
  if (LEVELS.includes(bot)) return bot;
  return Object.hasOwn(STRATEGY_LEVEL, bot) ? STRATEGY_LEVEL[bot] : null;
}

// A bot's level by its seat at the table (text: the name came from the API).
export function levelTag(seats, seat) {
  const level = botLevel(seats?.[seat]?.bot);
  return level ? html` <span class="tag level" title="bot level">${level}</span>` : "";
}

export function nameHtml(seats, seat) {
  const info = seats?.[seat] ?? {};
  return html`${seatName(seats, seat)}${info.bot ? html` <span class="tag">bot</span>` : ""}`;
}

// The badge of a game whose deal its creator chose (a seed or explicit deals): view.arranged.
export const arrangedBadge = (game) =>
  game?.arranged === true
    ? html` <span class="tag arranged" title="The creator chose the deal (a seed or explicit deals)">arranged</span>`
    : "";

// Runs an async action, showing its problem instead of failing silently. A reader's action
// clears the problem shown before it; background work (a poll) passes { clear: false }, so that
// it never hides, a second later, the problem the reader's own click met.
export async function attempt(action, { clear = true } = {}) {
  try {
    if (clear) clearProblem();
    return await action();
  } catch (error) {
    showProblem(error);
    return undefined;
  }
}

document.addEventListener("click", (event) => {
  if (event.target.closest("#problem .close")) clearProblem();
});

// A request waiting out a 429 or 503 (api.js announces it): say so until it is sent again.
window.addEventListener("hearts:wait", ({ detail: { seconds, problem } }) => {
  const box = $("#waiting");
  if (!box) return;
  box.hidden = seconds <= 0;
  box.textContent = `${problem?.title ?? "Busy"}: waiting ${seconds} s, then trying again…`;
});
