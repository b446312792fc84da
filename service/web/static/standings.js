// A group's standings (issue 44): the games among a chosen group of players only, so four
// friends see where they stand before any of them is on the leaderboard. #/standings/A,B,C,D:
// the names come from the fragment and go to the API as a query value, and back to the page as
// text only (the html helper escapes every value).

import { api } from "./api.js";
import { $, html, render, showProblem } from "./ui.js";

function figure(value) {
  if (value == null) return "–";
  return Number.isInteger(value) ? String(value) : value.toFixed(2);
}

function ratingText(row) {
  if (row.rating == null) return "–";
  return row.provisional ? `${row.rating.toFixed(1)} (provisional)` : row.rating.toFixed(1);
}

export async function showStandings(root, names) {
  const given = typeof names === "string" ? names : "";
  render(
    root,
    html`<section class="panel"><h1>Standings of a group</h1>
    <p class="muted">Only the games whose every seat was one of these players count. Name 2 to 8
    players, separated by commas (a registered name, or the name a guest typed).</p>
    <form id="group-form"><label for="group-names">Players</label>
    <input id="group-names" name="players" maxlength="1000" value="${given}" autocomplete="off">
    <button type="submit">Show</button></form>
    <div id="standings"></div></section>`,
  );
  $("#group-form", root).addEventListener("submit", (event) => {
    event.preventDefault();
    location.hash = `#/standings/${encodeURIComponent($("#group-names", root).value.trim())}`;
  });
  if (!given) return null;
  try {
    const body = await api.standings(given);
    const rows = body.players.map(
      (p) =>
        html`<tr><td>${p.name}</td><td>${p.games}</td><td>${p.wins}</td><td>${figure(p.average_points)}</td><td>${ratingText(p)}</td></tr>`,
    );
    render(
      $("#standings", root),
      html`<p>${body.games} game(s) among them.</p>
      <div class="scroll"><table class="points board" id="group-table"><thead><tr><th>player</th><th>games</th><th>wins</th><th>average points</th><th>rating</th></tr></thead><tbody>${rows}</tbody></table></div>`,
    );
  } catch (error) {
    showProblem(error);
  }
  return null;
}
