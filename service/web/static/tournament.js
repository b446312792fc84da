// A tournament (docs/tournaments.md): its standings, live (read again every few seconds while
// it runs). A duplicate: each round's tables with links to their games' replays once the round
// has ended, and each board's traveller (every table's result on it). An arena: its clock and
// its games as they are paired, each with its result and replay once recorded.

import { api } from "./api.js";
import { $, html, render, segment, showProblem } from "./ui.js";

const EVERY_MS = 5000;

function names(tournament) {
  const byId = new Map(tournament.players.map((p) => [p.id, p.name]));
  return (id) => (id == null ? html`<span class="muted">house bot</span>` : byId.get(id) ?? id);
}

function standingsTable(body, nameOf) {
  if (!body.rounds_counted) {
    return html`<p class="muted" id="no-standings">No round has ended yet: standings count a round once every table has finished it.</p>`;
  }
  const rows = body.standings.map(
    (s) =>
      html`<tr><td>${s.place}</td><td>${nameOf(s.player)}</td><td>${s.percentage.toFixed(2)}%</td><td>${s.matchpoints} / ${s.top}</td><td>${s.points}</td><td>${s.boards}</td></tr>`,
  );
  return html`<table class="points standings-table"><caption>After ${body.rounds_counted} round(s)</caption>
    <thead><tr><th>#</th><th>player</th><th>matchpoints %</th><th>matchpoints</th><th>points taken</th><th>boards</th></tr></thead>
    <tbody>${rows}</tbody></table>`;
}

function roundSection(tournament, round, nameOf) {
  const tables = round.tables.map((t) => {
    const seats = t.seats.map((p, s) => html`<li>seat ${s}: ${nameOf(p)}</li>`);
    const game = t.game_id
      ? round.ended
        ? html`<a href="#/replay/${segment(t.game_id)}/1">replay of table ${t.table + 1}</a>`
        : html`<span class="muted">in play (hidden until the round ends)</span>`
      : html`<span class="muted">no game</span>`;
    return html`<li class="table-of-round"><b>Table ${t.table + 1}</b> ${game}<ul>${seats}</ul></li>`;
  });
  const boards = round.ended
    ? Array.from({ length: tournament.boards }, (_, b) => b + 1).map(
        (b) =>
          html`<button type="button" class="traveller-button" data-round="${round.round}" data-board="${b}">Board ${b}</button>`,
      )
    : [];
  const seed = round.ended
    ? html`<p class="muted">Seed <code>${round.seed}</code>, committed as <code>${round.seed_commitment}</code></p>`
    : html`<p class="muted">Committed <code>${round.seed_commitment}</code></p>`;
  return html`<section class="round"><h2>Round ${round.round}${round.ended ? "" : " (in play)"}</h2>${seed}
    <ul class="tables">${tables}</ul>
    <p>${boards}</p><div class="traveller" id="traveller-${round.round}"></div></section>`;
}

function travellerTable(board, nameOf) {
  const rows = board.tables.flatMap((t) =>
    t.seats.map(
      (s) =>
        html`<tr><td>${t.table + 1}</td><td>${s.seat}</td><td>${nameOf(s.player)}</td><td>${s.score}</td><td>${s.matchpoints ?? "–"}</td></tr>`,
    ),
  );
  return html`<table class="points"><caption>Round ${board.round}, board ${board.board}</caption>
    <thead><tr><th>table</th><th>seat</th><th>player</th><th>points</th><th>matchpoints</th></tr></thead>
    <tbody>${rows}</tbody></table>`;
}

function arenaStandings(body, nameOf) {
  if (!body.games_counted) {
    return html`<p class="muted" id="no-standings">No game has been counted yet: a game counts once it has finished.</p>`;
  }
  const rows = body.standings.map(
    (s) =>
      html`<tr><td>${s.place}</td><td>${nameOf(s.player)}</td><td>${s.points}</td><td>${s.games}</td><td>${s.firsts}</td></tr>`,
  );
  const caption = body.frozen
    ? `Final, over ${body.games_counted} game(s)`
    : `After ${body.games_counted} game(s)`;
  return html`<table class="points standings-table"><caption>${caption}</caption>
    <thead><tr><th>#</th><th>player</th><th>points</th><th>games</th><th>first places</th></tr></thead>
    <tbody>${rows}</tbody></table>`;
}

function arenaGames(games, nameOf) {
  if (!games.length) return html`<p class="muted">No game paired yet.</p>`;
  const rows = games
    .slice()
    .reverse()
    .map((g) => {
      const seats = g.seats.map(
        (p, s) =>
          html`<li>${nameOf(p)}${g.scores ? html`: ${g.scores[s]} taken, ${g.points[s]} point(s)` : ""}</li>`,
      );
      const state = g.scores
        ? html`<a href="#/replay/${segment(g.game_id)}/1">replay</a>${g.counted ? "" : html` <span class="muted">(finished after the grace: not counted)</span>`}`
        : html`<span class="muted">in play</span>`;
      return html`<li class="arena-game"><b>Game ${g.game}</b> ${state}<ul>${seats}</ul></li>`;
    });
  return html`<ul class="tables">${rows}</ul>`;
}

function arenaClock(arena) {
  if (!arena.starts_at) {
    return html`<p>Arena of ${Math.round(arena.duration_seconds / 60)} minute(s), ${arena.hands} hand(s) a game: not started.</p>`;
  }
  return html`<p>Arena, ${arena.hands} hand(s) a game: pairing until <time datetime="${arena.ends_at}">${arena.ends_at}</time>; games finished by <time datetime="${arena.closes_at}">${arena.closes_at}</time> count. ${arena.games_in_play} game(s) in play, ${arena.waiting} player(s) waiting.</p>`;
}

export async function showTournament(root, id) {
  let timer = null;
  let alive = true;
  async function load() {
    const [tournament, standings, pairings] = await Promise.all([
      api.tournament(id),
      api.tournamentStandings(id),
      api.tournamentPairings(id),
    ]);
    if (!alive) return;
    const nameOf = names(tournament);
    if (tournament.arena) {
      render(
        root,
        html`<section class="panel tournament arena">
        <h1>${tournament.name} <span class="phase">${tournament.status}</span></h1>
        ${arenaClock(tournament.arena)}
        <h2>Standings</h2>${arenaStandings(standings, nameOf)}
        <h2>Games</h2>${arenaGames(pairings.games, nameOf)}</section>`,
      );
    } else render(
      root,
      html`<section class="panel tournament">
      <h1>${tournament.name} <span class="phase">${tournament.status}</span></h1>
      <p>Duplicate, ${tournament.rounds} round(s) of ${tournament.boards} board(s), ${tournament.players.length} player(s).</p>
      <h2>Standings</h2>${standingsTable(standings, nameOf)}
      ${pairings.rounds.map((r) => roundSection(tournament, r, nameOf))}</section>`,
    );
    root.querySelectorAll(".traveller-button").forEach((button) =>
      button.addEventListener("click", async () => {
        try {
          const board = await api.tournamentBoard(id, button.dataset.round, button.dataset.board);
          render($(`#traveller-${segment(button.dataset.round)}`, root), travellerTable(board, nameOf));
        } catch (error) {
          showProblem(error);
        }
      }),
    );
    if (tournament.status === "running" || tournament.status === "upcoming") {
      timer = setTimeout(() => load().catch(showProblem), EVERY_MS);
    }
  }
  await load();
  return () => {
    alive = false;
    if (timer) clearTimeout(timer);
  };
}
