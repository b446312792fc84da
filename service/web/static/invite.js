// Private tables (issue 44): the lobby's "private table" choice, the invitation link kept in
// this browser for the table to show while seats are open, and the page an invitation opens
// (#/invite/<game id>/<join code>): it asks a name and takes a seat with the code.
// The code travels in the link's fragment, which browsers never send to a server.

import { savedPlayer } from "./account.js";
import { api, call, saveSeat, savedSeat } from "./api.js";
import { $, attempt, html, nameHtml, render, segment } from "./ui.js";

const INVITATIONS = "hearts.invitations";
const NAME = "hearts.name";
// A join code as the service makes them (service/app/auth.py join_code: 128 bits, base64url).
export const JOIN_CODE = /^[A-Za-z0-9_-]{16,64}$/;

export const privateChoiceHtml = () =>
  html`<label class="check"><input type="checkbox" name="private"> Private table (only those with its link can join)</label>`;

function invitations() {
  try {
    const found = JSON.parse(localStorage.getItem(INVITATIONS));
    return found && typeof found === "object" ? found : {};
  } catch {
    return {};
  }
}

const invitationPath = (gameId, code) => `/#/invite/${segment(gameId)}/${segment(code)}`;

// Keeps a private table's invitation (the create's answer, or the link one came in by).
export function rememberInvitation(gameId, code) {
  if (!JOIN_CODE.test(code ?? "")) return;
  localStorage.setItem(INVITATIONS, JSON.stringify({ ...invitations(), [gameId]: code }));
}

// The invitation link of a game this browser created or was invited to, or null.
export function invitationLink(gameId) {
  const code = invitations()[gameId];
  return JOIN_CODE.test(code ?? "") ? new URL(invitationPath(gameId, code), location.origin).href : null;
}

// The table's box with the link to copy, while seats are open.
export function inviteHtml(gameId, view) {
  const link = view.phase === "waiting" ? invitationLink(gameId) : null;
  if (!link) return "";
  return html`<div class="banner invite"><b>Private table.</b> Send this link to the friends you invite:
    <input id="invite-link" readonly value="${link}" aria-label="Invitation link">
    <button type="button" id="copy-invite">Copy link</button></div>`;
}

// Copies the link (the clipboard, else the text selected for the reader to copy).
export async function copyInvitation(input) {
  input.select();
  try {
    await navigator.clipboard.writeText(input.value);
    return true;
  } catch {
    return false; // no clipboard here (an insecure origin): the text is selected
  }
}

// A join with the code (its creator's too): with the player's key when one is kept here, else
// as a guest.
export function joinWithCode(gameId, name, code, seat = null) {
  const player = savedPlayer();
  const path = `/games/${segment(gameId)}/seats`;
  const body = { join_code: code, ...(seat == null ? {} : { seat }) };
  if (!player) return call("POST", path, { body: { name, ...body } });
  return call("POST", path, { token: player.key, body });
}

export async function showInvite(root, gameId, code) {
  if (savedSeat(gameId)) {
    location.hash = `#/game/${segment(gameId)}`; // seated already, in this browser
    return null;
  }
  const view = await api.view(gameId, null);
  const seated = view.seats
    .map((seat, i) => (seat.name == null && seat.bot == null ? null : nameHtml(view.seats, i)))
    .filter((who) => who != null);
  const open = view.phase === "waiting" && view.seats.some((s) => s.name == null && s.bot == null);
  const form = html`<form id="accept" class="create">
      <label>Your name <input name="name" required maxlength="64" autocomplete="nickname"></label>
      <button class="primary" type="submit">Take a seat</button></form>`;
  render(
    root,
    html`<section class="panel invitation">
      <h1>An invitation to a private table</h1>
      <p>At the table: ${seated.length ? seated.map((who, i) => html`${i ? ", " : ""}${who}`) : "nobody yet"}.</p>
      ${open ? form : html`<p>Every seat is taken. <a href="#/watch/${segment(gameId)}">Watch the game</a></p>`}
    </section>`,
  );
  const accept = $("#accept", root);
  if (!accept) return null;
  accept.name.value = savedPlayer()?.name ?? localStorage.getItem(NAME) ?? "";
  accept.addEventListener("submit", (event) => {
    event.preventDefault();
    const name = accept.name.value.trim();
    localStorage.setItem(NAME, name);
    attempt(async () => {
      const joined = await joinWithCode(gameId, name, code);
      saveSeat(gameId, { seat: joined.seat, token: joined.token, name: savedPlayer()?.name ?? name });
      rememberInvitation(gameId, code); // so this player may invite others too
      location.hash = `#/game/${segment(gameId)}`;
    });
  });
  accept.name.focus();
  return null;
}
