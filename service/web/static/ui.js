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
