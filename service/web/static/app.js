// The page's router: #/ lobby, #/game/ID (play or watch), #/watch/ID, #/replay/ID/N,
// #/scoreboard/ID, #/leaderboard. Each page module renders into #page and returns a cleanup.

import { showLeaderboard, showScoreboard } from "./boards.js";
import { showLobby } from "./lobby.js";
import { showReplay } from "./replay.js";
import { showTable } from "./table.js";
import { $, clearProblem, setConnection, showProblem } from "./ui.js";

let cleanup = null;

async function route() {
  if (cleanup) cleanup();
  cleanup = null;
  clearProblem();
  setConnection(null);
  const [page, id, extra] = location.hash.replace(/^#\/?/, "").split("/").map(decodeURIComponent);
  const root = $("#page");
  root.innerHTML = "";
  document.body.dataset.page = page || "lobby";
  try {
    if (page === "game") cleanup = await showTable(root, id, { watch: false });
    else if (page === "watch") cleanup = await showTable(root, id, { watch: true });
    else if (page === "replay") cleanup = await showReplay(root, id, Number(extra) || 1);
    else if (page === "scoreboard") cleanup = await showScoreboard(root, id);
    else if (page === "leaderboard") cleanup = await showLeaderboard(root);
    else cleanup = await showLobby(root);
  } catch (error) {
    root.innerHTML = `<p class="muted">This page could not be shown. <a href="#/">Back to the lobby</a></p>`;
    showProblem(error);
  }
}

window.addEventListener("hashchange", route);
window.addEventListener("unhandledrejection", (event) => showProblem(event.reason));
route();
