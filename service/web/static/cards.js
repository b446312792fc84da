// Cards as the API writes them ("QS", "TD", "2C") and as a person reads them (Q♠, 10♦).
// Every card the page shows is made by cardHtml, with its code in data-card (the tests read it).

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

export function sortHand(cards) {
  const key = (c) => SUIT_ORDER.indexOf(suitOf(c)) * 16 + RANKS.indexOf(rankOf(c));
  return [...cards].sort((a, b) => key(a) - key(b));
}

export function escapeHtml(text) {
  return String(text ?? "").replace(
    /[&<>"']/g,
    (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c],
  );
}

// A card face. tag "button" for a card one may click; extra classes mark legal, selected, ...
export function cardHtml(card, { tag = "span", classes = [], attrs = "" } = {}) {
  const red = "DH".includes(suitOf(card)) ? " red" : "";
  const cls = ["card", ...classes].join(" ") + red;
  const type = tag === "button" ? ' type="button"' : "";
  const text = label(card);
  return `<${tag}${type} class="${cls}" data-card="${card}" aria-label="${text}" ${attrs}>` +
    `<span class="rank">${text.slice(0, -1)}</span><span class="suit">${text.slice(-1)}</span>` +
    `</${tag}>`;
}

export const cardBack = () => `<span class="card back" aria-hidden="true"></span>`;
