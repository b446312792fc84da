// Challenges in the browser (docs/challenges.md): a registered player challenges another by
// name, sees the challenges to and from it, accepts, declines or cancels, and sees them expire.
// A challenge to this player is told on its own stream (GET /players/me/events), followed for
// as long as the page is open, on every page (app.js calls listenForChallenges): a notice shows
// a line under the header, and the lobby's list reads the challenges again. No polling: the
// expiry is counted down from the challenge's `expires`, here. Drawn with DOM calls and
// textContent only: names are text, never markup.

import { call, followPlayer, saveSeat } from "./api.js";
import { savedPlayer } from "./account.js";
import { attempt, el, labelledSelect } from "./ui.js";

const PRESETS = ["standard", "computer", "omnibus", "original"];
const CLOCKS = [
  ["off", "none"],
  ["relaxed", "relaxed: 60 s a move + 5 min"],
  ["quick", "quick: 15 s a move + 1 min"],
];
const CHANGED = "hearts:challenges"; // a window event: the challenges changed, read them again
const sentHere = new Set(); // challenges sent from this page: accepted, their sender sits down
const answeredHere = new Set(); // answered from this page: its own notice asks for nothing more

// Sits this browser down at an accepted challenge's game: the challenger takes its seat's
// token with its key (the acceptor got its own in the answer).
async function takeSeat(player, challenge) {
  const path = `/games/${encodeURIComponent(challenge.game_id)}/seats/${challenge.your_seat}/resume`;
  const given = await call("POST", path, { token: player.key, body: {} });
  saveSeat(challenge.game_id, { seat: given.seat, token: given.token, name: player.name });
  location.hash = `#/game/${encodeURIComponent(challenge.game_id)}`;
}

// ---- notices, on every page ------------------------------------------------------------

let stopListening = null;

function showNotice(text, action) {
  const box = document.getElementById("notices");
  if (!box) return;
  const line = el("p", text, "notice");
  if (action) line.append(" ", action);
  const dismiss = el("button", "Dismiss", "small");
  dismiss.type = "button";
  dismiss.addEventListener("click", () => line.remove());
  line.append(" ", dismiss);
  box.append(line);
  while (box.children.length > 3) box.firstElementChild.remove();
}

function lobbyLink(text) {
  const link = el("a", text);
  link.href = "#/";
  link.addEventListener("click", () => link.closest(".notice")?.remove());
  return link;
}

// An answer told: the list is read again, except where the answer seats this page's sender
// (then it goes to the table). One request at most, so that both players' pages, often on one
// address, stay well under its rate limit.
async function answered(player, notice) {
  if (answeredHere.has(notice.challenge_id)) return; // this page answered: it knows
  if (notice.state !== "accepted" || !sentHere.has(notice.challenge_id)) {
    window.dispatchEvent(new CustomEvent(CHANGED));
    if (notice.state === "accepted" && notice.challenger === player.name) notAtTable(player, notice);
    return;
  }
  const challenge = await call("GET", `/challenges/${encodeURIComponent(notice.challenge_id)}`, {
    token: player.key,
  });
  sentHere.delete(challenge.id);
  if (["", "#", "#/"].includes(location.hash)) {
    await takeSeat(player, challenge); // waiting in the lobby it sent from: sit down
    return;
  }
  window.dispatchEvent(new CustomEvent(CHANGED));
  notAtTable(player, notice);
}

// The sender elsewhere (another page, another tab): a line offers its seat.
function notAtTable(player, notice) {
  const sit = el("button", "Take your seat", "small primary");
  sit.type = "button";
  sit.addEventListener("click", () =>
    attempt(async () => {
      const path = `/challenges/${encodeURIComponent(notice.challenge_id)}`;
      const challenge = await call("GET", path, { token: player.key });
      sit.closest(".notice")?.remove();
      if (challenge.direction === "outgoing") await takeSeat(player, challenge);
    }),
  );
  showNotice("A challenge of yours was accepted.", sit);
}

// Follows the registered player's stream (once: a second call restarts it, e.g. after
// registering or forgetting the key).
export function listenForChallenges() {
  if (stopListening) stopListening();
  stopListening = null;
  const player = savedPlayer();
  if (!player) return;
  stopListening = followPlayer(player.key, {
    onNotice(notice) {
      if (notice.type === "challenge") {
        showNotice(`${notice.challenger} challenges you to a game.`, lobbyLink("See challenges"));
        window.dispatchEvent(new CustomEvent(CHANGED));
      } else if (notice.type === "challengeAnswered") {
        attempt(() => answered(player, notice), { clear: false });
      }
    },
    onStatus(state, problem) {
      // The stream is the page's extra: a lost one is retried quietly (api.js); refused, it
      // stops (a forgotten key), and the lobby still reads the list when shown.
      if (state === "failed") stopListening = null;
      document.body.dataset.notices = state;
      if (state === "failed" && problem) console.info("player notices:", problem.title);
    },
  });
}

// ---- the lobby's panel -------------------------------------------------------------------

function remaining(expires) {
  const seconds = Math.max(0, Math.round((Date.parse(expires) - Date.now()) / 1000));
  return `${Math.floor(seconds / 60)}:${String(seconds % 60).padStart(2, "0")}`;
}

function rulesText(rules) {
  const parts = [rules?.preset ?? "standard", `${rules?.players ?? 4} players`];
  if (rules?.score_limit) parts.push(`to ${rules.score_limit}`);
  if (rules?.time_control) parts.push(`clock ${rules.time_control}`);
  return parts.join(", ");
}

// The state now: an open challenge past its expiry is expired, whatever the last read said.
const stateOf = (c) => (c.state === "open" && Date.parse(c.expires) <= Date.now() ? "expired" : c.state);

function challengeRow(player, c, reload) {
  const row = el("li", undefined, "challenge");
  row.dataset.challenge = c.id;
  row.dataset.state = stateOf(c);
  const incoming = c.direction === "incoming";
  const who = el("strong", incoming ? c.challenger : c.challenged);
  const meta = el("div", undefined, "meta");
  meta.append(incoming ? "From " : "To ", who, ` · ${rulesText(c.rules)} · `);
  const state = el("span", "", "phase");
  meta.append(state);
  const actions = el("div", undefined, "actions");
  const button = (text, cls, action) => {
    const b = el("button", text, cls);
    b.type = "button";
    b.addEventListener("click", () => attempt(action));
    actions.append(b);
  };
  const open = stateOf(c) === "open";
  if (open && incoming) {
    button("Accept", "primary", async () => {
      answeredHere.add(c.id);
      const given = await call("POST", `/challenges/${encodeURIComponent(c.id)}/accept`, {
        token: player.key,
        body: {},
      });
      const gameId = given.challenge.game_id;
      saveSeat(gameId, { seat: given.seat, token: given.token, name: player.name });
      location.hash = `#/game/${encodeURIComponent(gameId)}`;
    });
    button("Decline", "", async () => {
      answeredHere.add(c.id);
      await call("POST", `/challenges/${encodeURIComponent(c.id)}/decline`, { token: player.key, body: {} });
      reload();
    });
  } else if (open) {
    button("Cancel", "", async () => {
      answeredHere.add(c.id);
      await call("POST", `/challenges/${encodeURIComponent(c.id)}/cancel`, { token: player.key, body: {} });
      reload();
    });
  } else if (c.state === "accepted" && c.game_id) {
    button("Take your seat", "primary", () => takeSeat(player, c));
  }
  // The countdown: each second, here (no request); at zero the row says expired.
  const tick = () => {
    const now = stateOf(c);
    row.dataset.state = now;
    state.textContent = now === "open" ? `expires in ${remaining(c.expires)}` : now;
    if (now === "expired") actions.replaceChildren(); // nothing left to answer
    return now === "open";
  };
  tick();
  row.tick = tick;
  row.append(meta, actions);
  return row;
}

export function challengesPanel(player) {
  const section = el("div", undefined, "challenges-panel");
  const heading = el("h2", "Challenge a player");
  const form = el("form", undefined, "create challenge");
  const toLabel = el("label", "Player's name ");
  const to = el("input");
  to.name = "to";
  to.required = true;
  to.maxLength = 64;
  to.autocomplete = "off";
  toLabel.append(to);
  const limitLabel = el("label", "Play to ");
  const limit = el("input");
  limit.name = "score_limit";
  limit.type = "number";
  limit.min = "1";
  limit.max = "500";
  limit.value = "100";
  limitLabel.append(limit);
  const preset = labelledSelect("Rules", "preset", PRESETS.map((p) => [p, p]), "standard");
  const clock = labelledSelect("Turn clock", "time_control", CLOCKS, "off");
  const players = labelledSelect("Players", "players", ["3", "4", "5", "6"].map((n) => [n, n]), "4");
  const send = el("button", "Send challenge", "primary");
  send.type = "submit";
  form.append(toLabel, preset, limitLabel, clock, players, send);
  const note = el("p", "The other seats get strong bots; a challenge waits 10 minutes for its answer.", "muted");
  const listHeading = el("h2", "Your challenges");
  const list = el("ul", undefined, "games challenges");
  section.append(heading, form, note, listHeading, list);

  let rows = [];
  async function reload() {
    const body = await call("GET", "/challenges", { token: player.key });
    rows = body.challenges.map((c) => challengeRow(player, c, () => attempt(reload)));
    list.replaceChildren(...rows);
    if (!rows.length) list.append(el("li", "None: challenge someone by name.", "muted"));
  }
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    attempt(async () => {
      const rules = { preset: form.preset.value, players: Number(form.players.value) };
      if (limit.value) rules.score_limit = Number(limit.value);
      if (form.time_control.value !== "off") rules.time_control = form.time_control.value;
      const sent = await call("POST", "/challenges", { token: player.key, body: { to: to.value.trim(), rules } });
      sentHere.add(sent.id);
      to.value = "";
      await reload();
    });
  });
  // Read again on a notice (listenForChallenges); count down each second; both stop once the
  // panel left the page.
  const onChange = () => {
    if (!section.isConnected) return window.removeEventListener(CHANGED, onChange);
    attempt(reload, { clear: false });
  };
  window.addEventListener(CHANGED, onChange);
  const timer = setInterval(() => {
    if (!section.isConnected) {
      clearInterval(timer);
      window.removeEventListener(CHANGED, onChange);
      return;
    }
    for (const row of rows) row.tick();
  }, 1000);
  list.append(el("li", "Loading…", "muted"));
  attempt(reload, { clear: false });
  return section;
}
