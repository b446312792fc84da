// A registered player in the browser: register a name (POST /players), keep its key in
// localStorage as the seat tokens are kept, join with it, and "my games" (GET /players/me/games)
// with a "resume here" per game (a fresh seat token for this browser). Drawn with DOM calls and
// textContent only.

import { call, saveSeat } from "./api.js";
import { PLAYER_ID } from "./ratings.js";
import { attempt } from "./ui.js";

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

function el(tag, text, className) {
  const node = document.createElement(tag);
  if (text !== undefined) node.textContent = text;
  if (className) node.className = className;
  return node;
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
    onChange();
  });
  title.append(" ", forget);
  const list = el("ul", undefined, "games my-games");
  list.append(el("li", "Loading…", "muted"));
  section.append(title, el("p", "Your key is kept in this browser only.", "muted"), list);
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
