// The lobby: your name, a form to create a game with bots, and the games to join or watch.

import { accountPanel, joinAs, savedPlayer } from "./account.js";
import { api, saveSeat, savedSeat } from "./api.js";
import { joinWithCode, privateChoiceHtml, rememberInvitation } from "./invite.js";
import { $, arrangedBadge, attempt, DEFAULT_LEVEL, html, LEVELS, render, seatName, segment } from "./ui.js";

const NAME = "hearts.name";
const PRESETS = ["standard", "computer", "omnibus", "original"];
// The turn clocks by name (domain/rules.py TIME_CONTROLS: seconds per decision, reserve).
const CLOCKS = [
  ["off", "none"],
  ["relaxed", "relaxed: 60 s a move + 5 min"],
  ["quick", "quick: 15 s a move + 1 min"],
];

function seatChoice(seat) {
  // The bots by level, weakest first; a person's table starts with the second strongest.
  const options = LEVELS.map(
    (b) => html`<option value="${b}"${b === DEFAULT_LEVEL ? html` selected` : ""}>bot: ${b}</option>`,
  );
  return html`<label>Seat ${seat} <select name="seat${seat}">${options}<option value="">open (a person)</option></select></label>`;
}

// A game a silent player left ends "finished" like any other: the lobby says it was abandoned
// and by whom (the API's abandoned_by), as the table does.
function phaseLabel(game) {
  if (game.phase === "finished" && game.abandoned_by != null) {
    const who = seatName(game.seats, game.abandoned_by);
    return html`<span class="phase abandoned" title="${who} left the game, which ended it">abandoned</span>`;
  }
  return html`<span class="phase">${game.phase}</span>`;
}

// An imported game replays its original exactly: without a sign, the two rows look the same.
function importedBadge(game) {
  if (game.imported !== true) return "";
  const from = game.imported_from ? html` <span class="from">copy of <code>${game.imported_from}</code></span>` : "";
  return html` <span class="tag imported" title="Imported from an export: not played here, not counted in the statistics">imported</span>${from}`;
}

function gameRow(game) {
  const open = game.seats.filter((s) => s.name == null && s.bot == null).length;
  const mine = savedSeat(game.id);
  const seats = game.seats.map((s, i) => {
    const who = s.name == null && s.bot == null ? html`<em>open</em>` : seatName(game.seats, i);
    return html`<span class="who">${who} <b>${game.scores?.[i] ?? 0}</b></span>`;
  });
  const done = game.phase === "finished" ? game.hand_number : game.hand_number - 1;
  const id = segment(game.id);
  const actions = [
    mine ? html`<a class="button primary" href="#/game/${id}">Resume (${mine.name})</a>` : "",
    !mine && open ? html`<button type="button" class="primary" data-join="${game.id}">Join</button>` : "",
    html`<a class="button" href="#/watch/${id}">Watch</a>`,
    done >= 1 ? html`<a class="button" href="#/replay/${id}/${segment(done)}">Replay</a>` : "",
    game.hand_number >= 1 ? html`<a class="button" href="#/scoreboard/${id}">Scores</a>` : "",
  ];
  return html`<li class="game" data-game="${game.id}">
    <div class="meta"><code>${game.id}</code> ${phaseLabel(game)}${arrangedBadge(game)}${importedBadge(game)}
      ${game.hand_number ? html`<span class="handno">hand ${game.hand_number}</span>` : ""}</div>
    <div class="seats">${seats}</div><div class="actions">${actions}</div></li>`;
}

async function loadGames() {
  // GET /games is oldest first: read a few pages and show the newest first.
  let games = [];
  let cursor = null;
  for (let page = 0; page < 5; page++) {
    // active: games in play that no one has moved in for a while (HEARTS_LOBBY_IDLE) are left
    // out; their players left.
    const query = `?limit=100&active=true${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`;
    const body = await api.games(query);
    games = games.concat(body.games);
    cursor = body.next_cursor;
    if (!cursor) break;
  }
  return games.reverse();
}

export async function showLobby(root) {
  render(
    root,
    html`
    <section class="panel">
      <h1>New game</h1>
      <form id="create" class="create">
        <label>Your name <input name="name" required maxlength="64" autocomplete="nickname"></label>
        <label>Rules <select name="preset">${PRESETS.map((p) => html`<option>${p}</option>`)}</select></label>
        <label>Play to <input name="score_limit" type="number" min="1" max="500" value="100"></label>
        <label>Turn clock <select name="time_control">${CLOCKS.map(([value, text]) => html`<option value="${value}">${text}</option>`)}</select></label>
        <label>Players <select name="players">${[3, 4, 5, 6].map((n) => html`<option${n === 4 ? html` selected` : ""}>${n}</option>`)}</select></label>
        <div class="seatpicks"></div>
        ${privateChoiceHtml()}
        <button class="primary" type="submit">Create and sit down</button>
      </form>
    </section>
    <section class="panel">
      <h1>Games <button type="button" id="refresh" class="small">Refresh</button></h1>
      <ul id="games" class="games"><li class="muted">Loading…</li></ul>
    </section>
    <section class="panel">
      <h1>Tournaments</h1>
      <ul id="tournaments" class="games"><li class="muted">Loading…</li></ul>
    </section>`,
  );
  // A registered player (its key kept in this browser) joins with its key (account.js).
  root.prepend(accountPanel(() => showLobby(root)));
  const form = $("#create", root);
  form.name.value = savedPlayer()?.name ?? localStorage.getItem(NAME) ?? "";
  const others = () => Array.from({ length: Number(form.players.value) - 1 }, (_, i) => i + 1);
  const drawSeatPicks = () => {
    render($(".seatpicks", form), html`<span>Seat 0: you</span>${others().map(seatChoice)}`);
  };
  form.players.addEventListener("change", drawSeatPicks);
  drawSeatPicks();
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const name = form.name.value.trim();
    localStorage.setItem(NAME, name);
    const seats = [null, ...others().map((s) => (form[`seat${s}`].value ? { bot: form[`seat${s}`].value } : null))];
    const rules = { preset: form.preset.value, players: Number(form.players.value) };
    if (form.score_limit.value) rules.score_limit = Number(form.score_limit.value);
    if (form.time_control.value !== "off") rules.time_control = form.time_control.value;
    attempt(async () => {
      const game = await api.create({ rules, seats, ...(form.private.checked ? { private: true } : {}) });
      rememberInvitation(game.id, game.join_code); // a private table's: the table shows its link
      await sitDown(game.id, name, 0, game.join_code);
    });
  });
  async function sitDown(gameId, name, seat, code = null) {
    const joined = code ? await joinWithCode(gameId, name, code, seat) : await joinAs(gameId, name, seat);
    saveSeat(gameId, { seat: joined.seat, token: joined.token, name: savedPlayer()?.name ?? name });
    location.hash = `#/game/${segment(gameId)}`;
  }
  const list = $("#games", root);
  list.addEventListener("click", (event) => {
    const button = event.target.closest("[data-join]");
    if (!button) return;
    const name = form.name.value.trim();
    if (!name) {
      form.name.reportValidity();
      form.name.focus();
      return;
    }
    localStorage.setItem(NAME, name);
    attempt(() => sitDown(button.dataset.join, name, null));
  });
  async function refresh() {
    const games = await attempt(loadGames);
    if (!games) return;
    render(list, games.length ? html`${games.map(gameRow)}` : html`<li class="muted">No games yet: create one.</li>`);
  }
  $("#refresh", root).addEventListener("click", refresh);
  await refresh();
  await listTournaments($("#tournaments", root));
  return null;
}

// Upcoming and running tournaments, each a link to its page (#/tournament/ID): names are text.
async function listTournaments(list) {
  const found = await attempt(async () => {
    const [running, upcoming] = await Promise.all([api.tournaments("running"), api.tournaments("upcoming")]);
    return [...running.tournaments, ...upcoming.tournaments];
  });
  if (!found) return;
  const row = (t) => {
    const when = t.starts_at ? html` <span class="muted">starts ${t.starts_at}</span>` : "";
    return html`<li class="game"><a href="#/tournament/${segment(t.id)}">${t.name}</a>
      <span class="phase">${t.status}</span> <span class="muted">${t.players.length} of ${t.max_players} players</span>${when}</li>`;
  };
  render(list, found.length ? html`${found.map(row)}` : html`<li class="muted">No tournament is upcoming or running.</li>`);
}
