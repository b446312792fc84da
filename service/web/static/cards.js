// Cards as the API writes them ("QS", "TD", "2C") and as a person reads them (Q♠, 10♦).
// Every card the page shows is made by cardHtml, with its code in data-card (the tests read it).

import { html } from "./ui.js";

export const SUITS = { C: "♣", D: "♦", S: "♠", H: "♥" };
const RANKS = "23456789TJQKA";
// Suits alternate colours in a hand: clubs, diamonds, spades, hearts.
const SUIT_ORDER = "CDSH";

export const rankOf = (card) => card.slice(0, -1);
export const suitOf = (card) => card.slice(-1);

export function label(card) {
  const rank = rankOf(card);
  return `${rank === "T" ? "10" : rank}${SUITS[suitOf(card)]}`;
}

// A card as it is spoken ("queen of spades", "10 of hearts"): its accessible name, so a screen
// reader does not read "Q black spade suit".
const RANK_NAMES = { T: "10", J: "jack", Q: "queen", K: "king", A: "ace" };
const SUIT_NAMES = { C: "clubs", D: "diamonds", S: "spades", H: "hearts" };

export function cardName(card) {
  const rank = rankOf(card);
  return `${RANK_NAMES[rank] ?? rank} of ${SUIT_NAMES[suitOf(card)]}`;
}

export function sortHand(cards) {
  const key = (c) => SUIT_ORDER.indexOf(suitOf(c)) * 16 + RANKS.indexOf(rankOf(c));
  return [...cards].sort((a, b) => key(a) - key(b));
}

// A card face: a button for a card one may click (disabled if it may not be played now), else
// a span; extra classes mark legal, selected, received. ``pressed`` (true or false) makes the
// button a toggle (a card chosen to pass or not); ``tabindex`` -1 leaves it out of the Tab order
// (the hand is one stop: the arrows move within it). The face is the project's own SVG
// (service/web/cardfaces.py, served from /web/cards/): a picture with an empty alt, as the card's
// name is its accessible name. ``chip`` draws a small card instead (a replay's four hands, a
// card named in a sentence): its rank as text and its suit as a picture, readable when small.
export function cardHtml(
  card,
  { button = false, disabled = false, classes = [], pressed = null, tabindex = null, chip = false } = {},
) {
  const cls = ["card", chip ? "chip" : "face", ...classes, ...("DH".includes(suitOf(card)) ? ["red"] : [])].join(" ");
  const name = cardName(card);
  const face = chip
    ? html`<span class="rank" aria-hidden="true">${label(card).slice(0, -1)}</span><img class="pip" src="/web/cards/suit-${suitOf(card)}.svg" alt="" draggable="false">`
    : html`<img src="/web/cards/${card}.svg" alt="" draggable="false">`;
  if (button) {
    const toggle = pressed == null ? "" : html` aria-pressed="${pressed ? "true" : "false"}"`;
    const order = tabindex == null ? "" : html` tabindex="${tabindex}"`;
    return html`<button type="button" class="${cls}" data-card="${card}" aria-label="${name}"${toggle}${order}${
      disabled ? html` disabled` : ""}>${face}</button>`;
  }
  return html`<span class="${cls}" data-card="${card}" role="img" aria-label="${name}">${face}</span>`;
}

export const cardBack = () =>
  html`<span class="card face back" aria-hidden="true"><img src="/web/cards/back.svg" alt="" draggable="false"></span>`;
