// The page's router: #/ lobby, #/game/ID (play or watch), #/watch/ID, #/invite/ID/CODE (a
// private table's invitation), #/replay/ID/N, #/scoreboard/ID, #/leaderboard, #/player/ID (a
// registered player's ratings), #/tournament/ID, #/standings/NAMES (a group's standings: names
// separated by commas). Each page module
// renders into its own element in #page and returns a cleanup.

import { ApiError } from "./api.js";
import { showLeaderboard, showScoreboard } from "./boards.js";
import { JOIN_CODE, showInvite } from "./invite.js";
import { showLobby } from "./lobby.js";
import { showPlayer } from "./ratings.js";
import { showReplay } from "./replay.js";
import { listenForChallenges } from "./challenges.js";
import { showStandings } from "./standings.js";
import { showTable } from "./table.js";
import { showTournament } from "./tournament.js";
import { $, clearProblem, html, render, setConnection, showProblem } from "./ui.js";

// The ids the service makes (service/app/game_service.py: new_game_id, game_id_for_key): "g"
// and 20 hex digits. Anything else in a link is refused before it reaches a request or the page.
export const GAME_ID = /^g[0-9a-f]{20}$/;
const TOURNAMENT_ID = /^t[0-9a-f]{20}$/; // service/app/tournaments.py: new_tournament_id
const HAND_NUMBER = /^[1-9][0-9]{0,5}$/;

// The fragment as [page, id, hand]: split on "/" first, then each part decoded once (a "%2F"
// in an id stays inside that id, and is then refused by the pattern).
export function parseFragment(hash) {
  const parts = hash.replace(/^#\/?/, "").split("/");
  return parts.map((part) => {
    try {
      return decodeURIComponent(part);
    } catch {
      return null; // malformed escapes: not a valid anything
    }
  });
}

// A link the page will not follow, shown like the server's problems.
const badLink = (detail) => new ApiError({ title: "Not a valid link", detail, code: "bad-link" });

function gameIdOf(id) {
  if (typeof id !== "string" || !GAME_ID.test(id)) {
    throw badLink("Its game id is not one this server makes (g and 20 hex digits).");
  }
  return id;
}

function handOf(extra) {
  if (extra === undefined || extra === "") return 1;
  if (typeof extra !== "string" || !HAND_NUMBER.test(extra)) {
    throw badLink("Its hand number is not a number.");
  }
  return Number(extra);
}

let cleanup = null;
let shown = 0; // the route last started: a page that finishes (or fails) after another began is not the one shown

function joinCodeOf(code) {
  if (typeof code !== "string" || !JOIN_CODE.test(code)) {
    throw badLink("Its join code is not one this server makes.");
  }
  return code;
}

function show(page, root, id, extra) {
  if (page === "invite") return showInvite(root, gameIdOf(id), joinCodeOf(extra));
  if (page === "game") return showTable(root, gameIdOf(id), { watch: false });
  if (page === "watch") return showTable(root, gameIdOf(id), { watch: true });
  if (page === "replay") return showReplay(root, gameIdOf(id), handOf(extra));
  if (page === "scoreboard") return showScoreboard(root, gameIdOf(id));
  if (page === "leaderboard") return showLeaderboard(root);
  if (page === "player") return showPlayer(root, id);
  if (page === "tournament") {
    if (typeof id !== "string" || !TOURNAMENT_ID.test(id)) {
      throw badLink("Its tournament id is not one this server makes (t and 20 hex digits).");
    }
    return showTournament(root, id);
  }
  if (page === "standings") return showStandings(root, id);
  return showLobby(root);
}

async function route() {
  const mine = ++shown;
  if (cleanup) cleanup();
  cleanup = null;
  clearProblem();
  setConnection(null);
  const [page, id, extra] = parseFragment(location.hash);
  // Each route draws into an element of its own: a page that finishes loading after the reader
  // moved on (a scoreboard waiting for the projector, a replay fetching its hand) draws into
  // that, out of the document, never over the page shown now.
  const root = document.createElement("div");
  $("#page").replaceChildren(root);
  document.body.dataset.page = page || "lobby";
  try {
    const stop = await show(page, root, id, extra);
    if (mine === shown) cleanup = stop;
    else if (stop) stop(); // left while it loaded: its stream or timers stop now
  } catch (error) {
    if (mine !== shown) return; // left before it failed: the page shown now is another's
    render(root, html`<p class="muted">This page could not be shown. <a href="#/">Back to the lobby</a></p>`);
    showProblem(error);
  }
}

window.addEventListener("hashchange", route);
listenForChallenges(); // a registered player's notices, on every page (challenges.js)
window.addEventListener("unhandledrejection", (event) => showProblem(event.reason));
route();
