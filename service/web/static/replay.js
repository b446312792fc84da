// Replay one hand step by step (deal, pass, every card, the score) from GET /games/{id}/hands/{n},
// with the game's audit (GET /games/{id}/audit) beside it.

import { analysisPanel } from "./analysis.js";
import { api } from "./api.js";
import { cardBack, cardHtml, sortHand } from "./cards.js";
import { $, arrangedBadge, attempt, html, nameHtml, render, seatName, seatPositions, segment } from "./ui.js";

// The hand as a list of steps; each step is everything the table shows at that moment.
export function replaySteps(record) {
  const timeouts = record.timeouts ?? []; // decisions the turn clock gave to the bot
  const seats = record.seats.length;
  const steps = [];
  let hands = record.dealt.map((cards) => (cards ? [...cards] : null));
  const taken = Array(seats).fill(0);
  const points = Array(seats).fill(0);
  const snapshot = (caption, trick, extra = {}) =>
    steps.push({
      caption,
      hands: hands.map((h) => (h ? [...h] : null)),
      trick,
      taken: [...taken],
      points: [...points],
      ...extra,
    });
  snapshot(`Deal (dealer ${seatName(record.seats, record.dealer)})`, []);
  const passing = record.passes.some((p) => p.passed?.length);
  if (passing) {
    hands = hands.map((cards, seat) => {
      const pass = record.passes[seat];
      if (!cards || !pass.passed || !pass.received) return cards;
      return cards.filter((c) => !pass.passed.includes(c)).concat(pass.received);
    });
    const late = timeouts.filter((t) => t.decision === "pass").map((t) => seatName(record.seats, t.seat));
    const passCaption = `Pass ${record.pass_direction}` + (late.length ? ` (time ran out for ${late.join(", ")}: the bot passed)` : "");
    snapshot(passCaption, [], { received: record.passes.map((p) => p.received) });
  }
  const tricks = [...record.tricks];
  if (record.current_trick?.length) tricks.push({ cards: record.current_trick, number: tricks.length + 1 });
  for (const trick of tricks) {
    trick.cards.forEach(({ seat, card }, index) => {
      if (hands[seat]) hands[seat] = hands[seat].filter((c) => c !== card);
      // The caption is text before the card played and text after it (the card is drawn).
      const caption = `Trick ${trick.number}: ${seatName(record.seats, seat)} plays`;
      let after = "";
      // The turn clock ran out for this seat: the timeout bot made this play.
      if (timeouts.some((t) => t.decision === "play" && t.trick === trick.number && t.seat === seat)) {
        after += " (time ran out: its bot played)";
      }
      const complete = index === trick.cards.length - 1 && trick.winner != null;
      if (complete) {
        taken[trick.winner] += 1;
        points[trick.winner] += trick.points;
        after += `; ${seatName(record.seats, trick.winner)} takes it` + (trick.points ? ` (${trick.points} pt)` : "");
      }
      snapshot(caption, trick.cards.slice(0, index + 1), {
        card,
        after,
        winner: complete ? trick.winner : null,
        trickNumber: trick.number,
        seat,
      });
    });
  }
  if (record.finished) {
    snapshot(`Hand ${record.hand_number} scored`, [], { scored: true });
  }
  return steps;
}

function auditHtml(report) {
  const checks = report.checks.map(
    (c) => html`<li class="${c.ok ? "ok" : "bad"}" data-check="${c.name}">${c.ok ? "✔" : "✘"} <b>${c.name}</b>
        <span class="muted">${c.checked} ${c.unit}</span></li>`,
  );
  const problems = report.discrepancies.map(
    (d) => html`<li class="bad">${typeof d === "string" ? d : JSON.stringify(d)}</li>`,
  );
  return html`<h2>Audit: <span class="${report.ok ? "ok" : "bad"}">${report.ok ? "all checks pass" : "discrepancies found"}</span></h2>
    <ul class="checks">${checks}${problems}</ul>
    <p class="muted">${report.events} events, ${report.hands.length} hand(s) checked.</p>`;
}

// The keys that move the replay (a step back or on, the first, the last).
const STEP_KEYS = ["ArrowLeft", "ArrowRight", "Home", "End"];

export async function showReplay(root, gameId, number) {
  // Keys pressed while the hand loads are kept and applied in order once it is shown: End then
  // ArrowLeft pressed early read step 0 (both lost) instead of the step before the last.
  const early = [];
  let onKey = (key) => early.push(key);
  const keys = (event) => {
    if (!STEP_KEYS.includes(event.key)) return;
    if (event.target.closest?.("input, select, textarea")) return; // the slider moves itself
    if (event.altKey || event.ctrlKey || event.metaKey) return; // the browser's own shortcuts
    onKey(event.key);
    event.preventDefault();
  };
  document.addEventListener("keydown", keys);
  let record;
  let game;
  try {
    [record, game] = await Promise.all([api.hand(gameId, number), api.view(gameId)]);
  } catch (error) {
    document.removeEventListener("keydown", keys);
    throw error;
  }
  const steps = replaySteps(record);
  let at = 0; // the deal: once the hand is over, all four hands are shown
  const hands = game.phase === "finished" ? game.hand_number : game.hand_number - 1;
  const id = segment(gameId);
  const picker = Array.from({ length: Math.max(hands, number) }, (_, i) => i + 1).map(
    (n) => html`<a href="#/replay/${id}/${n}" class="${n === number ? "current" : ""}">${n}</a> `,
  );
  render(
    root,
    html`
    <section class="replay table" id="replay">
      <div class="status">Replay of <code>${gameId}</code>${arrangedBadge(game)}, hand ${number} ·
        pass ${record.pass_direction} · <span class="hands">hands: ${picker}</span> ·
        <a href="#/watch/${id}">table</a> · <a href="#/scoreboard/${id}">scoreboard</a></div>
      <div class="felt"></div>
      <div class="controls">
        <button type="button" data-go="first" aria-label="First">|◀</button>
        <button type="button" data-go="back" aria-label="Back">◀</button>
        <input type="range" min="0" max="${steps.length - 1}" value="${at}" aria-label="Step">
        <button type="button" data-go="forward" aria-label="Forward">▶</button>
        <button type="button" data-go="last" aria-label="Last">▶|</button>
      </div>
      <div class="caption" aria-live="polite"></div>
      <aside class="analysis"></aside>
      <aside class="audit"><p class="muted">Auditing…</p></aside>
    </section>`,
  );
  const section = $("#replay", root);
  const felt = $(".felt", section);
  const slider = $("input[type=range]", section);
  const analysis = analysisPanel($(".analysis", section), {
    gameId,
    number,
    record,
    steps,
    goTo: (index) => show(index),
  });

  function seatHtml(seat, position, step) {
    const cards = step.hands[seat];
    const received = new Set(step.received?.[seat] ?? []);
    const shown = cards
      ? sortHand(cards).map((c) => cardHtml(c, { chip: true, classes: received.has(c) ? ["received"] : [] }))
      : cardBack();
    const winner = step.winner === seat ? " to-act" : "";
    const total = step.scored ? ` · total ${record.totals[seat]}` : "";
    return html`<div class="seat pos-${position}${winner}" data-seat="${seat}">
      <div class="name">${nameHtml(record.seats, seat)}</div>
      <div class="figures"><span>tricks ${step.taken[seat]}</span><span>pts ${step.points[seat]}</span>${total}</div>
      <div class="minihand">${shown}</div></div>`;
  }

  function show(index) {
    at = Math.max(0, Math.min(index, steps.length - 1));
    const step = steps[at];
    slider.value = String(at);
    // What a screen reader says of the slider: the step in words, not a bare number.
    slider.setAttribute("aria-valuetext", `${at} of ${steps.length - 1}: ${step.caption}`);
    section.dataset.step = String(at);
    const positions = seatPositions(record.seats.length); // seen from seat 0
    const seats = positions.map((position, s) => seatHtml(s, position, step));
    const trick = step.trick.map(
      ({ seat, card }) => html`<div class="slot pos-${positions[seat]}">${cardHtml(card)}</div>`,
    );
    render(felt, html`${seats}<div class="trick">${trick}</div>`);
    let caption = html`${at} / ${steps.length - 1}: ${step.caption}`;
    if (step.card) caption = html`${caption} ${cardHtml(step.card, { chip: true })}${step.after}`;
    if (step.scored) {
      const changes = record.score_changes.map(
        (c, s) => html`${s ? ", " : ""}${nameHtml(record.seats, s)} ${c > 0 ? "+" : ""}${c}`,
      );
      const shot = record.shot ? html` (${seatName(record.seats, record.shooter)} shot the ${record.shot})` : "";
      caption = html`${caption}: ${changes}${shot}`;
    }
    render($(".caption", section), caption);
    analysis.show(step);
  }

  // The step buttons say where to go in data-go (data-step is the section's own: the step
  // shown, which a click anywhere else in the section must not read as a move).
  section.addEventListener("click", (event) => {
    const button = event.target.closest("button[data-go]");
    if (!button) return;
    const moves = { first: 0, back: at - 1, forward: at + 1, last: steps.length - 1 };
    if (button.dataset.go in moves) show(moves[button.dataset.go]);
  });
  slider.addEventListener("input", () => show(Number(slider.value)));
  onKey = (key) => show({ ArrowLeft: at - 1, ArrowRight: at + 1, Home: 0, End: steps.length - 1 }[key]);
  show(at);
  for (const key of early.splice(0)) onKey(key);
  attempt(async () => {
    render($(".audit", section), auditHtml(await api.audit(gameId)));
  });
  return () => {
    document.removeEventListener("keydown", keys);
    analysis.stop();
  };
}
