// A registered player in the browser: register a name (POST /players), keep its key in
// localStorage as the seat tokens are kept, join with it, and "my games" (GET /players/me/games)
// with a "resume here" per game (a fresh seat token for this browser). Drawn with DOM calls and
// textContent only.

import { call, saveSeat } from "./api.js";
import { challengesPanel, listenForChallenges } from "./challenges.js";
import { PLAYER_ID } from "./ratings.js";
import { attempt, el, labelledSelect } from "./ui.js";

const PLAYER = "hearts.player";

// {id, name, key} of the player registered in this browser, or null.
export function savedPlayer() {
  try {
    const found = JSON.parse(localStorage.getItem(PLAYER));
    return found && typeof found.key === "string" && PLAYER_ID.test(found.id ?? "") ? found : null;
  } catch {
    return null;
  }
}

// A join: with the player's key when one is kept here (the seat is then the player's, under its
// registered name), else as a guest under ``name``.
export function joinAs(gameId, name, seat) {
  const player = savedPlayer();
  const path = `/games/${encodeURIComponent(gameId)}/seats`;
  if (!player) return call("POST", path, { body: seat == null ? { name } : { name, seat } });
  return call("POST", path, { token: player.key, body: seat == null ? {} : { seat } });
}

// The lobby's "player" panel; ``onChange`` is called after registering or forgetting.
export function accountPanel(onChange) {
  const section = el("section", undefined, "panel account");
  const player = savedPlayer();
  if (!player) {
    section.append(el("h1", "Register"));
    section.append(
      el("p", "A registered name is yours across the service: your games are rated and listed.", "muted"),
    );
    const form = el("form", undefined, "create register");
    const label = el("label", "Name ");
    const input = el("input");
    input.name = "player";
    input.required = true;
    input.maxLength = 64;
    label.append(input);
    const button = el("button", "Register", "primary");
    button.type = "submit";
    form.append(label, button);
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      attempt(async () => {
        const made = await call("POST", "/players", { body: { name: input.value.trim() } });
        localStorage.setItem(PLAYER, JSON.stringify({ id: made.id, name: made.name, key: made.key }));
        listenForChallenges(); // its own stream: challenges to it (challenges.js)
        onChange();
      });
    });
    section.append(form);
    return section;
  }
  const title = el("h1", "Playing as ");
  const link = el("a", player.name);
  link.href = `#/player/${encodeURIComponent(player.id)}`;
  title.append(link);
  const forget = el("button", "Forget my key", "small");
  forget.type = "button";
  forget.addEventListener("click", () => {
    localStorage.removeItem(PLAYER);
    clearInterval(seeking.timer); // a seek of the key forgotten is no longer this page's
    seeking.seek = null;
    listenForChallenges();
    onChange();
  });
  title.append(" ", forget);
  const list = el("ul", undefined, "games my-games");
  list.append(el("li", "Loading…", "muted"));
  section.append(title, el("p", "Your key is kept in this browser only.", "muted"), playNow(player), list, challengesPanel(player));
  attempt(async () => {
    const body = await call("GET", "/players/me/games?limit=20", { token: player.key });
    list.replaceChildren();
    if (!body.games.length) list.append(el("li", "No games yet: join one.", "muted"));
    for (const game of body.games) {
      const row = el("li", undefined, "game");
      row.dataset.game = game.id;
      const meta = el("div", undefined, "meta");
      meta.append(el("code", game.id), " ", el("span", game.phase, "phase"), ` seat ${game.seat}`);
      const actions = el("div", undefined, "actions");
      if (game.phase !== "finished") {
        const resume = el("button", "Resume here", "primary");
        resume.type = "button";
        resume.addEventListener("click", () =>
          attempt(async () => {
            const path = `/games/${encodeURIComponent(game.id)}/seats/${game.seat}/resume`;
            const given = await call("POST", path, { token: player.key, body: {} });
            saveSeat(game.id, { seat: given.seat, token: given.token, name: player.name });
            location.hash = `#/game/${encodeURIComponent(game.id)}`;
          }),
        );
        actions.append(resume);
      }
      const scores = el("a", "Scores", "button");
      scores.href = `#/scoreboard/${encodeURIComponent(game.id)}`;
      actions.append(scores);
      row.append(meta, actions);
      list.append(row);
    }
  });
  return section;
}

// "Play now": a seek (POST /seeks) for a table of this kind, followed until it is matched
// (then this browser takes the seat: resume with the key) or ends. One follower a page: it
// goes on while another page is shown (a match still takes this browser to the table), and
// the lobby drawn again (or the page reloaded: GET /seeks) shows the seek and can cancel it.
const seeking = { seek: null, timer: null, ui: null };

function showSeek(text) {
  const ui = seeking.ui;
  if (!ui) return;
  const waiting = seeking.seek !== null;
  ui.cancel.hidden = !waiting;
  ui.button.disabled = waiting;
  ui.status.textContent = text;
}

function followSeek(player, seek) {
  clearInterval(seeking.timer);
  seeking.seek = seek;
  // A poll: it leaves the problem shown alone (a second later it would hide what was met).
  const poll = async () => {
    const path = `/seeks/${encodeURIComponent(seek.id)}`;
    await seekAnswered(player, await call("GET", path, { token: player.key }));
  };
  seeking.timer = setInterval(() => attempt(poll, { clear: false }), 1000);
  return seekAnswered(player, seek);
}

async function seekAnswered(player, seek) {
  if (seeking.seek?.id !== seek.id) return; // an answer about a seek already over
  if (seek.state === "waiting") {
    showSeek(`Waiting for players (${seek.players} at the table)…`);
    return;
  }
  seeking.seek = null;
  clearInterval(seeking.timer);
  if (seek.state !== "matched") {
    showSeek(`Your seek ${seek.state}.`);
    return;
  }
  showSeek("Matched: taking your seat…");
  const path = `/games/${encodeURIComponent(seek.game_id)}/seats/${seek.seat}/resume`;
  const given = await call("POST", path, { token: player.key, body: {} });
  saveSeat(seek.game_id, { seat: given.seat, token: given.token, name: player.name });
  location.hash = `#/game/${encodeURIComponent(seek.game_id)}`;
}

function playNow(player) {
  const form = el("form", undefined, "create seek");
  const players = labelledSelect("Players", "players", [["3", "3"], ["4", "4"], ["5", "5"], ["6", "6"]], "4");
  const clock = labelledSelect(
    "Clock",
    "time_control",
    // Matched games are rated, and a rated game always has a clock (issue 32).
    [["relaxed", "relaxed (60 s + 300 s)"], ["quick", "quick (15 s + 60 s)"]],
    "relaxed",
  );
  const fillLabel = el("label", "Bots after (s) ");
  const fill = el("input");
  fill.name = "fill";
  fill.type = "number";
  fill.min = "1";
  fill.max = "3600";
  fill.value = "30";
  fillLabel.append(fill);
  const button = el("button", "Play now", "primary");
  button.type = "submit";
  // While the seek waits, it can be called off (DELETE /seeks/ID); one already paired stays
  // paired, and its answer then takes the seat like a poll's would.
  const cancel = el("button", "Cancel seek", "small");
  cancel.type = "button";
  cancel.hidden = true;
  const status = el("p", "", "muted seek-status");
  status.setAttribute("role", "status");
  form.append(players, clock, fillLabel, button, cancel, status);
  seeking.ui = { button, cancel, status };
  cancel.addEventListener("click", () =>
    attempt(async () => {
      if (!seeking.seek) return;
      const path = `/seeks/${encodeURIComponent(seeking.seek.id)}`;
      await seekAnswered(player, await call("DELETE", path, { token: player.key }));
    }),
  );
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    attempt(async () => {
      const body = {
        players: Number(form.players.value),
        time_control: form.time_control.value,
        fill_with_bots_after: fill.value ? Number(fill.value) : null,
      };
      await followSeek(player, await call("POST", "/seeks", { token: player.key, body }));
    });
  });
  if (seeking.seek) {
    showSeek(`Waiting for players (${seeking.seek.players} at the table)…`);
  } else {
    // A seek of this player's still waiting (this page reloaded, another tab): followed here.
    // "Play now" waits for the answer: a second seek of the kind would be refused (409).
    button.disabled = true;
    attempt(
      async () => {
        const { seeks } = await call("GET", "/seeks", { token: player.key });
        if (seeks.length && !seeking.seek) await followSeek(player, seeks[0]);
      },
      { clear: false },
    ).finally(() => {
      if (!seeking.seek) button.disabled = false;
    });
  }
  return form;
}
