// What every page shares: the problem banner, the connection badge, seat names.

import { ApiError } from "./api.js";
import { escapeHtml } from "./cards.js";

export const $ = (selector, root = document) => root.querySelector(selector);

export function showProblem(error) {
  const problem =
    error instanceof ApiError ? error.problem : { title: "Error", detail: String(error?.message ?? error) };
  const box = $("#problem");
  $(".title", box).textContent = problem.title;
  $(".detail", box).textContent = problem.detail ?? "";
  box.dataset.code = problem.code ?? "";
  box.hidden = false;
}

export function clearProblem() {
  $("#problem").hidden = true;
}

// "live", "lost" (retrying), "failed", or null to hide the badge.
export function setConnection(state, problem) {
  const badge = $("#connection");
  badge.hidden = state == null;
  badge.dataset.state = state ?? "";
  badge.textContent =
    state === "live" ? "● live" : state === "lost" ? `○ ${problem?.detail ?? "reconnecting"}` : "× offline";
  badge.title = problem ? `${problem.title}: ${problem.detail ?? ""}` : "";
}

// Where each seat sits, clockwise from the viewer (at the bottom), for 3 to 6 players: the
// classes the felt's and the trick's grids place (style.css).
const LAYOUTS = {
  3: ["bottom", "left", "right"],
  4: ["bottom", "left", "top", "right"],
  5: ["bottom", "left", "top-left", "top-right", "right"],
  6: ["bottom", "left", "top-left", "top", "top-right", "right"],
};

export function seatPositions(players) {
  return LAYOUTS[players] ?? LAYOUTS[4];
}

// The seat a pass in `direction` goes to from `seat` (domain/passing.py pass_target), or null.
export function passTarget(direction, seat, players) {
  const offset = { left: 1, right: players - 1, across: Math.floor(players / 2) }[direction];
  return offset == null ? null : (seat + offset) % players;
}

export function seatName(seats, seat) {
  const info = seats?.[seat];
  if (!info) return `seat ${seat}`;
  return info.name ?? (info.bot ? info.bot : `seat ${seat} (open)`);
}

export function nameHtml(seats, seat) {
  const info = seats?.[seat] ?? {};
  const bot = info.bot ? ` <span class="tag">bot</span>` : "";
  return `${escapeHtml(seatName(seats, seat))}${bot}`;
}

// Runs an async action, showing its problem instead of failing silently.
export async function attempt(action) {
  try {
    clearProblem();
    return await action();
  } catch (error) {
    showProblem(error);
    return undefined;
  }
}

document.addEventListener("click", (event) => {
  if (event.target.closest("#problem .close")) clearProblem();
});
