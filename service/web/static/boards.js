// The projections: a game's scoreboard (with a plot of the running totals, a line per seat)
// and the players' leaderboard.

import { api } from "./api.js";
import { nameCell } from "./ratings.js";
import { $, arrangedBadge, html, nameHtml, render, segment, showProblem } from "./ui.js";

// Each seat's colour is its class, seat-0 to seat-5 (style.css): no style attributes, which the
// Content-Security-Policy (style-src 'self') would refuse.

// An SVG line chart of the running total after each hand; hand 0 is the start (all zero).
export function totalsPlot(seats, hands) {
  const scored = hands.filter((h) => h.totals);
  const series = seats.map((_, seat) => [0, ...scored.map((h) => h.totals[seat])]);
  const width = 640;
  const height = 260;
  const pad = { left: 40, right: 12, top: 12, bottom: 28 };
  const max = Math.max(10, ...series.flat());
  const min = Math.min(0, ...series.flat());
  const count = Math.max(1, scored.length);
  const x = (i) => pad.left + (i / count) * (width - pad.left - pad.right);
  const y = (v) => pad.top + ((max - v) / (max - min)) * (height - pad.top - pad.bottom);
  const lines = series.map((values, seat) => {
    const points = values.map((v, i) => `${x(i).toFixed(1)},${y(v).toFixed(1)}`).join(" ");
    return html`<polyline class="line seat-${seat}" fill="none" stroke-width="2.5" points="${points}" data-seat="${seat}"/>`;
  });
  const ticks = [min, Math.round((min + max) / 2), max].map(
    (v) => html`<text x="${pad.left - 6}" y="${y(v) + 4}" text-anchor="end">${v}</text>
      <line x1="${pad.left}" x2="${width - pad.right}" y1="${y(v)}" y2="${y(v)}" class="grid"/>`,
  );
  const labels = scored.map(
    (h, i) => html`<text x="${x(i + 1)}" y="${height - 8}" text-anchor="middle">${h.hand_number}</text>`,
  );
  const legend = seats.map((_, s) => html`<span><i class="swatch seat-${s}"></i>${nameHtml(seats, s)}</span>`);
  return html`<figure class="plot"><svg viewBox="0 0 ${width} ${height}" role="img" aria-label="Score per hand">
    ${ticks}${labels}${lines}</svg><figcaption class="legend">${legend}</figcaption></figure>`;
}

// The projector trails the log: a game it has not reached yet is 404 scoreboard-not-ready with
// Retry-After, so the page says so and asks again a few times.
async function scoreboardWhenReady(root, gameId, alive) {
  for (let attempt = 0; ; attempt++) {
    try {
      return await api.scoreboard(gameId);
    } catch (error) {
      if (error.problem?.code !== "scoreboard-not-ready" || attempt >= 20 || !alive()) throw error;
      render(root, html`<p class="muted">${error.problem.detail}; retrying…</p>`);
      await new Promise((resolve) => setTimeout(resolve, 1000));
    }
  }
}

export async function showScoreboard(root, gameId) {
  const hash = location.hash;
  const board = await scoreboardWhenReady(root, gameId, () => location.hash === hash);
  const seats = board.seats;
  const head = seats.map((_, s) => html`<th>${nameHtml(seats, s)}</th>`);
  const rows = board.hands.map((h) => {
    const cells = seats.map((_, s) => {
      if (!h.scored) return html`<td class="muted">…</td>`;
      const change = h.score_changes[s];
      const moon = h.shooter === s ? html` <span class="tag">${h.shot}</span>` : "";
      return html`<td>${change > 0 ? "+" : ""}${change} <b>${h.totals[s]}</b>${moon}</td>`;
    });
    return html`<tr><td><a href="#/replay/${segment(gameId)}/${segment(h.hand_number)}">${h.hand_number}</a></td><td>${h.pass_direction}</td>${cells}</tr>`;
  });
  // The list numbers the standings itself, each at its rank (value: tied seats share one).
  const standings = board.standings.map(
    (s) => html`<li value="${s.rank}">${nameHtml(seats, s.seat)} ${s.total}${s.winner ? TROPHY : ""}</li>`,
  );
  render(
    root,
    html`<section class="panel scoreboard">
    <h1>Scoreboard <code>${gameId}</code> <span class="phase">${board.status}</span>${arrangedBadge(board)}</h1>
    <p><a href="#/watch/${segment(gameId)}">Table</a></p>
    ${totalsPlot(seats, board.hands)}
    <table class="points"><thead><tr><th>hand</th><th>pass</th>${head}</tr></thead><tbody>${rows}</tbody></table>
    <ol class="standings">${standings}</ol></section>`,
  );
  return null;
}

const FIGURES = [
  ["rating", "rating"],
  ["wins", "wins"],
  ["win_rate", "win rate"],
  ["games_played", "games"],
  ["games_finished", "finished"],
  ["hands_played", "hands"],
  ["average_final_score", "avg final score"],
  ["average_points_per_hand", "avg points/hand"],
  ["moons_shot", "moons"],
  ["suns_shot", "suns"],
  ["qs_taken", "Q♠ taken"],
  ["hearts_taken", "♥ taken"],
  ["timeouts", "timeouts"],
  ["longest_clean_streak", "clean streak"],
];

// The winner's mark: an image of our own, not an emoji a system without an emoji font draws as
// a box (issue 44); its alt text is what a screen reader says.
const TROPHY = html` <img class="trophy" src="/web/trophy.svg" alt="winner" width="16" height="16">`;
// What makes a rating established and a game rated (projections/ratings.py: PROVISIONAL_GAMES,
// PROVISIONAL_OPPONENTS, MIN_RATED_SCORE_LIMIT; docs/projections.md): said on the page in words.
const PROVISIONAL_GAMES = 10;
const PROVISIONAL_OPPONENTS = 5;
const MIN_RATED_SCORE_LIMIT = 50;

function figure(value) {
  if (value == null) return "–";
  return Number.isInteger(value) ? String(value) : value.toFixed(2);
}

export async function showLeaderboard(root) {
  render(
    root,
    html`<section class="panel"><h1>Leaderboard
    <select id="sort" aria-label="Rank by">${FIGURES.map(([k, t]) => html`<option value="${k}">${t}</option>`)}</select></h1>
    <p class="muted">Ranked by rating, only established ratings are listed (enough games against enough players). Friends who play among themselves see their own standings on <a href="#/standings" id="group-link">a board of their group</a>.</p>
    <div id="board"><p class="muted">Loading…</p></div></section>`,
  );
  const select = $("#sort", root);
  async function load() {
    const body = await api.leaderboard(select.value);
    const head = FIGURES.map(([, t]) => html`<th>${t}</th>`);
    const rows = body.players.map(
      (p) => html`<tr><td>${p.rank}</td><td class="who"></td>${FIGURES.map(([k]) => html`<td>${figure(p[k])}</td>`)}</tr>`,
    );
    render(
      $("#board", root),
      body.players.length
        ? html`<div class="scroll"><table class="points board"><thead><tr><th>#</th><th>player</th>${head}</tr></thead><tbody>${rows}</tbody></table></div>`
        : select.value === "rating"
          ? html`<p class="muted" id="no-ratings">No established rating yet: a rating stays provisional, and off this list, until it is established. A player is listed here after ${PROVISIONAL_GAMES} rated games against at least ${PROVISIONAL_OPPONENTS} different opponents (a game against players who are new themselves counts for less). A game is rated when every seat is a different registered player (joined with their key), it has a turn clock, it plays to at least ${MIN_RATED_SCORE_LIMIT} points and nobody chose its deals. Rank by another figure to see every player, or see your group's own standings.</p>`
          : html`<p class="muted" id="no-players">No finished games counted yet. Every name that sat in a game finished here appears once the game ends; imported games and games whose creator chose the deals are not counted.</p>`,
    );
    // Names as DOM text (ratings.js): a player's links to its rating page.
    $("#board", root)
      .querySelectorAll("td.who")
      .forEach((cell, i) => cell.replaceWith(nameCell(body.players[i])));
  }
  select.addEventListener("change", () => load().catch(showProblem));
  await load();
  return null;
}
