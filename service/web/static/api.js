// The public HTTP API and its event stream, as a browser sees them: the reference client.
// Every failure becomes an ApiError carrying the RFC 9457 problem the server sent.

export const BASE = "/api/v1";

export class ApiError extends Error {
  constructor(problem) {
    super(`${problem.title}: ${problem.detail ?? ""}`);
    this.problem = problem;
  }
}

function bearer(token) {
  return token ? { Authorization: `Bearer ${token}` } : {};
}

// A problem from a failed response; a made-up one when the body is not a problem (a proxy's
// HTML page, a dropped connection), so the page always has a title and a detail to show.
async function problemOf(response) {
  try {
    const body = await response.json();
    if (body && body.title) return body;
  } catch {
    // not JSON: fall through
  }
  return { title: `HTTP ${response.status}`, detail: response.statusText, status: response.status };
}

function randomKey() {
  const bytes = crypto.getRandomValues(new Uint8Array(32));
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

export async function call(method, path, { token, body, idempotent = true } = {}) {
  const headers = { Accept: "application/json", ...bearer(token) };
  // no-store: the table always wants the state now, and a game's replay and event pages are
  // tagged by version only, so a revalidated copy fetched without a token could come back (304)
  // for a request that now carries one (the game view itself is tagged per seat).
  const init = { method, headers, cache: "no-store" };
  if (body !== undefined) {
    headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
    // A retried POST (after a timeout) must not act twice: one key per intended command. 256
    // random bits: a join's receipt (its token) is bound to its key, so no one may guess it.
    if (idempotent) headers["Idempotency-Key"] = randomKey();
  }
  let response;
  for (let attempt = 0; ; attempt++) {
    try {
      response = await fetch(BASE + path, init);
    } catch (error) {
      throw new ApiError({ title: "Connection lost", detail: String(error.message ?? error) });
    }
    const wait = response.ok ? null : waitBeforeRetry(response, attempt);
    if (wait == null) break;
    // Over a rate limit, or the server busy: wait as it asks (the same Idempotency-Key goes
    // again, so nothing acts twice) and say so, rather than failing the click.
    const problem = await problemOf(response);
    announceWait(wait, problem);
    await sleep(wait * 1000);
    announceWait(0, problem);
  }
  if (!response.ok) {
    const error = new ApiError(await problemOf(response));
    // Given up on a 429 or 503 (its wait too long, or tried enough): the page says when to try
    // again (ui.js showProblem), whether or not the problem's detail does.
    if ([429, 503].includes(response.status)) error.retryAfter = retryAfterOf(response);
    throw error;
  }
  keepHead(response.headers.get("Hearts-Head"));
  return response.status === 204 ? null : response.json();
}

// Seconds to wait before sending a 429's or a 503's request again (its Retry-After), or null
// to give up: a few times, each at most MAX_WAIT seconds.
const RETRIES = 5;
const MAX_WAIT = 30;

function waitBeforeRetry(response, attempt) {
  if (![429, 503].includes(response.status) || attempt >= RETRIES) return null;
  const seconds = response.headers.has("Retry-After") ? retryAfterOf(response) : 1;
  if (seconds == null || seconds > MAX_WAIT) return null;
  return seconds;
}

// A response's Retry-After in whole seconds from now (delta-seconds or an HTTP-date, RFC 9110
// 10.2.3), or null when it has none the page can read.
function retryAfterOf(response) {
  const value = (response.headers.get("Retry-After") ?? "").trim();
  if (!value) return null;
  if (/^\d+(\.\d+)?$/.test(value)) return Number(value);
  const when = Date.parse(value);
  return Number.isFinite(when) ? Math.max(0, Math.ceil((when - Date.now()) / 1000)) : null;
}

// Pages show the wait (ui.js listens): seconds > 0 while waiting, 0 when it is over.
function announceWait(seconds, problem) {
  window.dispatchEvent(new CustomEvent("hearts:wait", { detail: { seconds, problem } }));
}

// The newest signed head of each game the page was told about (docs/verify.md), kept in
// localStorage: with it, hearts-verify can later prove whether the game was rewritten.
const HEADS = "hearts.heads";

function keepHead(value) {
  if (!value) return;
  try {
    const lines = atob(value).split("\n");
    const gameId = lines[1].startsWith("game ") ? lines[1].slice(5) : null;
    const version = Number(lines[2].startsWith("version ") ? lines[2].slice(8) : NaN);
    if (!gameId || !Number.isSafeInteger(version)) return;
    const heads = JSON.parse(localStorage.getItem(HEADS) || "{}");
    if ((heads[gameId]?.version ?? -1) > version) return;
    heads[gameId] = { version, head: value };
    localStorage.setItem(HEADS, JSON.stringify(heads));
  } catch {
    // a head the page cannot read, or no storage: the game plays on without it
  }
}

export function savedHeads() {
  try {
    return JSON.parse(localStorage.getItem(HEADS) || "{}");
  } catch {
    return {};
  }
}

// Every value put into a path is one encoded segment: an id can never add a segment, a query
// or a fragment to the request (issue 22: "ID/scoreboard?x=..." once reached another endpoint).
const seg = (value) => encodeURIComponent(String(value));
const game = (id) => `/games/${seg(id)}`;

export const api = {
  games: (query = "") => call("GET", `/games${query}`),
  create: (body) => call("POST", "/games", { body }),
  join: (id, name, seat) =>
    call("POST", `${game(id)}/seats`, { body: seat == null ? { name } : { name, seat } }),
  view: (id, token) => call("GET", game(id), { token }),
  pass: (id, token, cards) => call("POST", `${game(id)}/pass`, { token, body: { cards } }),
  play: (id, token, card) => call("POST", `${game(id)}/play`, { token, body: { card } }),
  moon: (id, token, choice) => call("POST", `${game(id)}/moon`, { token, body: { choice } }),
  contribute: (id, token, handNumber, seed) =>
    call("POST", `${game(id)}/contribution`, { token, body: { seed, hand_number: handNumber } }),
  back: (id, token, seat) => call("POST", `${game(id)}/seats/${seg(seat)}/back`, { token, body: {} }),
  hand: (id, n) => call("GET", `${game(id)}/hands/${seg(n)}`),
  audit: (id) => call("GET", `${game(id)}/audit`),
  scoreboard: (id) => call("GET", `${game(id)}/scoreboard`),
  leaderboard: (sort) => call("GET", `/leaderboard?sort=${encodeURIComponent(sort)}&limit=50`),
  tournaments: (status, limit = 10) =>
    call("GET", `/tournaments?status=${encodeURIComponent(status)}&limit=${encodeURIComponent(limit)}`),
  tournament: (id) => call("GET", `/tournaments/${seg(id)}`),
  tournamentStandings: (id) => call("GET", `/tournaments/${seg(id)}/standings`),
  tournamentPairings: (id) => call("GET", `/tournaments/${seg(id)}/pairings`),
  tournamentBoard: (id, round, board) =>
    call("GET", `/tournaments/${seg(id)}/rounds/${seg(round)}/boards/${seg(board)}`),
  standings: (players) => call("GET", `/standings?players=${encodeURIComponent(players)}`),
};

// Seat tokens live in localStorage, one per game, so a reload or a closed tab resumes the game.
const SEATS = "hearts.seats";

export function savedSeats() {
  try {
    return JSON.parse(localStorage.getItem(SEATS)) ?? {};
  } catch {
    return {};
  }
}

export function savedSeat(gameId) {
  return savedSeats()[gameId] ?? null;
}

export function saveSeat(gameId, seat) {
  const all = savedSeats();
  all[gameId] = seat;
  localStorage.setItem(SEATS, JSON.stringify(all));
}

export function forgetSeat(gameId) {
  const all = savedSeats();
  delete all[gameId];
  localStorage.setItem(SEATS, JSON.stringify(all));
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

// Follows a game's events as Server-Sent Events. fetch rather than EventSource, because a seat's
// stream needs an Authorization header. A dropped connection is retried (backing off) with
// Last-Event-ID, so nothing is lost or repeated. Returns a function that stops it.
export function follow(gameId, { token, after = 0, onItem, onEnd, onStatus }) {
  return followStream(`${game(gameId)}/events`, { token, after, onItem, onEnd, onStatus });
}

// A registered player's own stream (GET /players/me/events: docs/matchmaking.md): its notices
// by type, e.g. a challenge to it (docs/challenges.md). Notice ids are strings ("<n>-<m>").
// The stream ends (onEnd) when the key was rotated or revoked, or is refused (onStatus).
export function followPlayer(key, { onNotice, onEnd = () => {}, onStatus = () => {} }) {
  return followStream("/players/me/events", {
    token: key,
    after: null,
    onItem: onNotice,
    onEnd,
    onStatus,
    named: true,
  });
}

// ``named``: the stream's events are named by type (a player's notices) rather than all
// "message" (a game's events, whose ids are seqs).
function followStream(path, { token, after = 0, onItem, onEnd, onStatus, named = false }) {
  let last = after;
  let stopped = false;
  let controller = null;
  let delay = 1000; // the next retry's wait; back to 1 s once a connection is live

  function dispatch(block) {
    let event = "message";
    let id = null;
    const data = [];
    for (const line of block.split("\n")) {
      if (line === "" || line.startsWith(":")) continue;
      const colon = line.indexOf(":");
      const name = colon < 0 ? line : line.slice(0, colon);
      let value = colon < 0 ? "" : line.slice(colon + 1);
      if (value.startsWith(" ")) value = value.slice(1);
      if (name === "event") event = value;
      else if (name === "id") id = named ? value : Number(value);
      else if (name === "data") data.push(value);
    }
    if (!data.length) return "go on";
    const payload = JSON.parse(data.join("\n"));
    if (event === "message" || (named && !["end", "reconnect", "revoked"].includes(event))) {
      if (id != null) last = id;
      onItem(payload);
    } else if (event === "end" || event === "revoked") {
      onEnd(payload);
      return "end";
    } else if (event === "reconnect") {
      return "reconnect";
    }
    return "go on";
  }

  async function once() {
    controller = new AbortController();
    const headers = { Accept: "text/event-stream", ...bearer(token) };
    if (last) headers["Last-Event-ID"] = String(last);
    const response = await fetch(`${BASE}${path}`, {
      headers,
      signal: controller.signal,
    });
    if (response.status === 204) {
      onEnd(null); // finished before we came back
      return "end";
    }
    if (!response.ok) {
      const error = new ApiError(await problemOf(response));
      // Over a limit (429) or busy (503): the next try waits at least as long as asked.
      const asked = Number(response.headers.get("Retry-After"));
      if ([429, 503].includes(response.status) && Number.isFinite(asked)) error.retryAfter = asked;
      throw error;
    }
    delay = 1000;
    onStatus("live");
    const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
    let buffer = "";
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return "dropped";
      buffer += value.replace(/\r\n?/g, "\n");
      let end;
      while ((end = buffer.indexOf("\n\n")) >= 0) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const outcome = dispatch(block);
        if (outcome !== "go on") return outcome;
      }
    }
  }

  (async () => {
    while (!stopped) {
      let outcome;
      let title = "Connection lost";
      let wait = delay;
      try {
        outcome = await once();
        if (outcome === "end") return;
      } catch (error) {
        if (stopped) return;
        const problem = error instanceof ApiError ? error.problem : null;
        if (problem?.status === 404 || problem?.status === 401) {
          onStatus("failed", problem);
          return;
        }
        if (error.retryAfter != null) {
          title = problem.title;
          wait = Math.min(Math.max(delay, error.retryAfter * 1000), 60000);
        }
      }
      if (stopped) return;
      if (outcome !== "reconnect") {
        onStatus("lost", { title, detail: `retrying in ${wait / 1000} s` });
        await sleep(wait);
        delay = Math.min(delay * 2, 15000);
      }
    }
  })();

  return () => {
    stopped = true;
    controller?.abort();
  };
}
