// A registered player's page (#/player/ID): the rating and its history, plotted (one point per
// rated game), from GET /ratings/{id}. Drawn with DOM calls only (createElementNS, textContent):
// no markup is built from the data, and nothing inline for the Content-Security-Policy to refuse.

import { call } from "./api.js";
import { el } from "./ui.js";

// The ids the service makes for players (service/app/players.py): "p" and 20 hex digits.
export const PLAYER_ID = /^p[0-9a-f]{20}$/;
const SVG = "http://www.w3.org/2000/svg";

function svg(tag, attributes = {}, text) {
  const node = document.createElementNS(SVG, tag);
  for (const [name, value] of Object.entries(attributes)) node.setAttribute(name, String(value));
  if (text !== undefined) node.textContent = text;
  return node;
}

const fixed = (value) => (value == null ? "–" : value.toFixed(2));

// A time as the reader reads times (their locale and zone), the exact instant in its title.
function timeCell(iso) {
  const cell = el("td");
  const when = new Date(iso);
  const shown = Number.isNaN(when.getTime())
    ? String(iso ?? "")
    : when.toLocaleString(undefined, { dateStyle: "medium", timeStyle: "short" });
  const time = el("time", shown);
  time.dateTime = String(iso ?? "");
  time.title = String(iso ?? "");
  cell.append(time);
  return cell;
}

// An SVG line of the conservative rating (mu - 3 sigma) after each rated game, with mu dotted.
export function ratingPlot(history) {
  const width = 640;
  const height = 240;
  const pad = { left: 44, right: 12, top: 12, bottom: 28 };
  const ratings = [0, ...history.map((p) => p.rating)]; // game 0: a newcomer, about 0
  const mus = [25, ...history.map((p) => p.mu)];
  const all = [...ratings, ...mus];
  const max = Math.ceil(Math.max(...all) + 1);
  const min = Math.floor(Math.min(...all) - 1);
  const count = Math.max(1, history.length);
  const x = (i) => pad.left + (i / count) * (width - pad.left - pad.right);
  const y = (v) => pad.top + ((max - v) / (max - min)) * (height - pad.top - pad.bottom);
  const root = svg("svg", { viewBox: `0 0 ${width} ${height}`, role: "img" });
  root.setAttribute("aria-label", "Rating after each rated game");
  for (const v of [min, Math.round((min + max) / 2), max]) {
    root.append(
      svg("line", { x1: pad.left, x2: width - pad.right, y1: y(v), y2: y(v), class: "grid" }),
      svg("text", { x: pad.left - 6, y: y(v) + 4, "text-anchor": "end" }, String(v)),
    );
  }
  const points = (values) => values.map((v, i) => `${x(i).toFixed(1)},${y(v).toFixed(1)}`).join(" ");
  root.append(
    svg("polyline", { points: points(mus), fill: "none", "stroke-width": 1.5, class: "line seat-1 mu" }),
    svg("polyline", { points: points(ratings), fill: "none", "stroke-width": 2.5, class: "line seat-0 rating" }),
  );
  const step = Math.max(1, Math.ceil(history.length / 12));
  history.forEach((_, i) => {
    if ((i + 1) % step === 0 || i === history.length - 1) {
      root.append(svg("text", { x: x(i + 1), y: height - 8, "text-anchor": "middle" }, String(i + 1)));
    }
  });
  const figure = el("figure", undefined, "plot rating-plot");
  const caption = el("figcaption", undefined, "legend");
  for (const [seat, text] of [[0, "rating (mu - 3 sigma)"], [1, "mu"]]) {
    const item = el("span");
    item.append(el("i", undefined, `swatch seat-${seat}`), document.createTextNode(text));
    caption.append(item);
  }
  figure.append(root, caption);
  return figure;
}

export async function showPlayer(root, id) {
  if (typeof id !== "string" || !PLAYER_ID.test(id)) {
    root.replaceChildren(el("p", "Not a player id this server makes (p and 20 hex digits).", "muted"));
    return null;
  }
  const body = await call("GET", `/ratings/${encodeURIComponent(id)}`);
  const section = el("section", undefined, "panel player");
  const title = el("h1", body.name);
  if (body.provisional) title.append(" ", el("span", "provisional", "tag"));
  const summary = el(
    "p",
    body.rating == null
      ? "No rated game yet (a game is rated when every seat is a registered player)."
      : `Rating ${fixed(body.rating)} (mu ${fixed(body.mu)}, sigma ${fixed(body.sigma)}) after ${body.rated_games} rated games.`,
  );
  section.append(title, summary);
  if (body.history.length) {
    section.append(ratingPlot(body.history));
    const table = el("table", undefined, "points");
    const head = el("tr");
    for (const text of ["#", "game", "finished", "place", "rating"]) head.append(el("th", text));
    table.append(el("thead"));
    table.tHead.append(head);
    const rows = el("tbody");
    body.history.forEach((point, i) => {
      const row = el("tr");
      const game = el("td");
      const link = el("a", point.game_id);
      link.href = `#/scoreboard/${encodeURIComponent(point.game_id)}`;
      game.append(link);
      row.append(el("td", String(i + 1)), game, timeCell(point.finished_at));
      row.append(el("td", `${point.rank} of ${point.players}`), el("td", fixed(point.rating)));
      rows.append(row);
    });
    table.append(rows);
    const scroll = el("div", undefined, "scroll");
    scroll.append(table);
    section.append(scroll);
  }
  root.replaceChildren(section);
  return null;
}

// A leaderboard's name cell: a registered player's name links to its page (with "?" while its
// rating is provisional); a guest's name says so; a bot's is its strategy.
export function nameCell(row) {
  const cell = el("td", undefined, "who");
  if (row.kind === "player" && PLAYER_ID.test(row.player_id ?? "")) {
    const link = el("a", row.name);
    link.href = `#/player/${encodeURIComponent(row.player_id)}`;
    cell.append(link);
    if (row.provisional) cell.append(" ", el("span", "?", "tag provisional"));
  } else {
    cell.append(row.name ?? "", " ", el("span", row.kind === "bot" ? "bot" : "guest", "tag"));
  }
  return cell;
}
