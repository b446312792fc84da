// The table: play your seat (token from localStorage) or watch (no token: public view only).
// The view comes from GET /games/{id}; the event stream says when it changed. No polling.

import { api, follow, forgetSeat, saveSeat, savedSeat } from "./api.js";
import { cardHtml, cardName, sortHand } from "./cards.js";
import { copyInvitation, inviteHtml } from "./invite.js";
import { setSound, sound, soundOn } from "./sound.js";
import {
  $,
  arrangedBadge,
  attempt,
  html,
  levelTag,
  nameHtml,
  passTarget,
  render,
  seatName,
  seatPositions,
  segment,
  setConnection,
  showProblem,
} from "./ui.js";

// The hands this tab's seats have contributed to ("game/hand"), kept across the tables it opens
// and its reloads (sessionStorage): coming back to a table must not send a hand's contribution
// twice (one cut off by leaving may still have arrived). The newest few: a hand's key matters
// only until its deal.
const CONTRIBUTED = "hearts.contributed";
const CONTRIBUTED_KEPT = 32;

const contributed = {
  keys() {
    try {
      const found = JSON.parse(sessionStorage.getItem(CONTRIBUTED));
      return Array.isArray(found) ? found.filter((k) => typeof k === "string") : [];
    } catch {
      return []; // storage off, or not ours: remember nothing rather than fail the table
    }
  },
  store(keys) {
    try {
      sessionStorage.setItem(CONTRIBUTED, JSON.stringify(keys.slice(-CONTRIBUTED_KEPT)));
    } catch {
      // storage full or off: the server's 409 is the backstop
    }
  },
  has(key) {
    return this.keys().includes(key);
  },
  add(key) {
    this.store([...this.keys().filter((k) => k !== key), key]);
  },
  delete(key) {
    this.store(this.keys().filter((k) => k !== key));
  },
};

// Seconds left until an ISO deadline, as m:ss (never below 0:00).
function timeLeft(deadline) {
  const left = Math.max(0, Math.ceil((Date.parse(deadline) - Date.now()) / 1000));
  return `${Math.floor(left / 60)}:${String(left % 60).padStart(2, "0")}`;
}

// The countdowns tick between views: only their text changes, nothing is redrawn.
function tickCountdowns(root) {
  for (const element of root.querySelectorAll(".countdown[data-deadline]")) {
    element.textContent = timeLeft(element.dataset.deadline);
    element.classList.toggle("low", Date.parse(element.dataset.deadline) - Date.now() < 10_000);
  }
}

function handSummaryHtml(seats, hand, gameId) {
  const rows = hand.points_taken.map((points, seat) => {
    const change = hand.score_changes[seat];
    const sign = change > 0 ? "+" : "";
    return html`<tr><td>${nameHtml(seats, seat)}</td><td>${points}</td><td>${sign}${change}</td><td>${hand.totals[seat]}</td></tr>`;
  });
  const shot = hand.shot ? html`<p>${seatName(seats, hand.shooter)} shot the ${hand.shot}!</p>` : "";
  return html`<h2>Hand ${hand.hand_number} over</h2>${shot}
    <table class="points"><thead><tr><th></th><th>taken</th><th>score</th><th>total</th></tr></thead>
    <tbody>${rows}</tbody></table>
    <a href="#/replay/${segment(gameId)}/${segment(hand.hand_number)}">Replay hand ${hand.hand_number}</a>`;
}

export async function showTable(root, gameId, { watch }) {
  let mine = watch ? null : savedSeat(gameId);
  let view = null;
  let lastHand = null; // the last scored hand: points, changes, totals
  let selected = new Set(); // cards chosen to pass
  let busy = false;
  let stop = null;
  let refreshing = null;
  let stale = false;
  let showLast = false; // the last trick, shown on request (the button, or L)
  // What the page has drawn of this hand, so that a card is animated once, as it arrives (a
  // redraw for another reason does not replay it) and the first view of a page animates nothing.
  let drawn = null;
  let noticed = null;

  // The live region stays outside the table's redraws, so screen readers hear each change once.
  render(root, html`<section id="table" class="table"></section><p id="announce" class="sr-only" aria-live="polite"></p>`);
  const table = $("#table", root);
  const announcer = $("#announce", root); // kept: a view may arrive after the page moved on

  async function load() {
    try {
      return await api.view(gameId, mine?.token);
    } catch (error) {
      if (mine && error.problem?.status === 401) {
        // A token this game does not know (another server's data): watch instead.
        forgetSeat(gameId);
        mine = null;
        return api.view(gameId, null);
      }
      throw error;
    }
  }

  // Deals no one can steer: the server committed its seed for the next hand (next_deal); this
  // seat adds a random seed of its own to that hand's shuffle, once a hand.
  function contribute() {
    const next = view.next_deal;
    if (view.seat == null || !next) return;
    const key = `${gameId}/${next.hand_number}`;
    if (contributed.has(key)) return;
    if (next.contributions.some((c) => c.seat === view.seat)) return;
    contributed.add(key);
    const bytes = crypto.getRandomValues(new Uint8Array(16));
    const seed = Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
    api.contribute(gameId, mine.token, next.hand_number, seed).catch((error) => {
      // Refused for a reason of its own: try again on the next view. Not when it is there
      // already (409) nor when leaving the table cut the request off: it may have arrived,
      // and a second one would be refused (a console error) when the table is opened again.
      const status = error?.problem?.status;
      if (status && status !== 409) contributed.delete(key);
    });
  }

  function accept(next) {
    if (view && next.version < view.version) return; // an older answer overtaken by events
    if (view && next.version === view.version && next.seat === view.seat) return; // no news
    if (view && next.hand_number !== view.hand_number) selected = new Set();
    view = next;
    if (mine) contribute();
    // While your command is on its way, bots' moves seen meanwhile wait for its answer: no
    // half-way redraw that would take the keyboard focus away from your hand, and one
    // announcement of it all (your card first) rather than one cut short by the next.
    if (!busy) {
      say();
      draw();
    }
  }

  // The live region says what changed since it last spoke.
  let spoken = null;
  function say() {
    if (spoken === view) return;
    announce(spoken, view);
    spoken = view;
  }

  // Events say the game moved on: fetch the view once, however many events arrived meanwhile.
  async function refresh() {
    if (refreshing) {
      stale = true;
      return refreshing;
    }
    refreshing = (async () => {
      do {
        stale = false;
        try {
          accept(await load());
        } catch (error) {
          showProblem(error);
        }
      } while (stale);
      refreshing = null;
    })();
    return refreshing;
  }

  function onItem(item) {
    if (item.type === "HandScored") {
      lastHand = item.payload;
      // A refresh for an earlier event may have fetched a view past this one already: then no
      // refresh follows, so the hand's summary is drawn now (else it showed only on the next move,
      // and never once the game was over).
      if (view && item.seq <= view.version && !busy) draw();
    }
    if (!view || item.seq > view.version) refresh();
  }

  function startStream() {
    stop = follow(gameId, {
      token: mine?.token,
      after: view.version,
      onItem,
      onEnd: () => {
        setConnection(null);
        refresh();
      },
      onStatus: (state, problem) => {
        setConnection(state, problem);
        if (state === "live") refresh(); // catch up on anything missed while away
      },
    });
  }

  async function act(action) {
    if (busy) return;
    busy = true;
    table.classList.add("busy");
    const result = await attempt(action);
    busy = false;
    table.classList.remove("busy");
    if (result?.view) {
      for (const item of result.events ?? []) if (item.type === "HandScored") lastHand = item.payload;
      accept(result.view);
    }
    say();
    draw(); // the hand was drawn disabled while busy, even if the view is the same version
  }

  // Says the cards played since the last view and whose turn it is, in words (ARIA live).
  function announce(before, after) {
    const plays = (v) => [...v.tricks.flatMap((t) => t.cards), ...v.current_trick];
    const sameHand = before && before.hand_number === after.hand_number;
    const played = plays(after).slice(sameHand ? plays(before).length : 0);
    const who = (seat) => (seat === after.seat ? "You" : seatName(after.seats, seat));
    const parts = [];
    // The pass is over: the cards it brought (said once, as the hand's play begins).
    if (sameHand && before.phase === "passing" && after.phase !== "passing" && after.received_cards?.length) {
      parts.push(`You received the ${after.received_cards.map(cardName).join(", the ")}.`);
    }
    parts.push(...played.map(({ seat, card }) => `${who(seat)} played the ${cardName(card)}.`));
    if (after.phase === "playing" && after.turn != null && after.turn !== before?.turn) {
      parts.push(after.turn === after.seat ? "Your turn." : `${who(after.turn)} to play.`);
    } else if (after.phase !== before?.phase) {
      const phases = {
        passing: `Hand ${after.hand_number}: pass ${after.pass_direction}.`,
        moon_choice: `${who(after.moon_shooter)} shot the ${after.shot?.kind ?? "moon"}.`,
        finished: "Game over.",
      };
      parts.push(phases[after.phase] ?? "");
    }
    const text = parts.join(" ").trim();
    if (text) announcer.textContent = text;
  }

  // The clock of the seat to act (yours first while you are awaited), beside the status line.
  function turnClockHtml() {
    if (["finished", "expired", "waiting"].includes(view.phase)) return "";
    const awaited = view.phase === "playing" && view.turn != null ? [view.turn] : view.awaiting;
    const seat = awaited.includes(view.seat) ? view.seat : awaited[0];
    const deadline = seat == null ? null : view.clock?.seats[seat]?.deadline;
    if (!deadline) return "";
    const who = seat === view.seat ? "Your time" : `${seatName(view.seats, seat)}: time`;
    return html`<span class="turnclock" title="time left to decide">${who}
      <span class="countdown" data-deadline="${deadline}">${timeLeft(deadline)}</span></span>`;
  }

  function statusLine() {
    const me = view.seat;
    const who = (seat) => (seat === me ? "You" : seatName(view.seats, seat));
    if (view.phase === "waiting") {
      const open = view.seats.filter((s) => s.name == null && s.bot == null).length;
      return `Waiting for ${open} player${open === 1 ? "" : "s"} to join`;
    }
    if (view.phase === "finished" && view.abandoned_by != null) {
      return `${who(view.abandoned_by)} left the game · Game over`;
    }
    if (view.phase === "finished") return "Game over";
    if (view.phase === "expired") return "Expired: its seats were not all taken in time";
    const parts = [`Hand ${view.hand_number}`, `pass ${view.pass_direction}`];
    if (view.hearts_broken) parts.push(html`<span class="red">♥ broken</span>`);
    if (view.phase === "passing") {
      const waiting = view.awaiting.map(who).join(", ");
      parts.push(me != null && view.awaiting.includes(me) ? html`<b>your pass</b>` : `waiting for ${waiting} to pass`);
    } else if (view.phase === "moon_choice") {
      parts.push(`${who(view.moon_shooter)} shot the ${view.shot?.kind ?? "moon"}`);
    } else if (view.turn != null) {
      parts.push(view.turn === me ? html`<b>your turn</b>` : `${who(view.turn)} to play`);
    }
    return parts.map((part, i) => html`${i ? " · " : ""}${part}`);
  }

  function seatHtml(seat, position) {
    const info = view.seats[seat];
    const tricks = view.tricks.filter((t) => t.winner === seat).length;
    const classes = ["seat", `pos-${position}`];
    if (view.awaiting.includes(seat)) classes.push("to-act");
    if (seat === view.seat) classes.push("me");
    if (view.winners?.includes(seat)) classes.push("winner");
    const passed = view.phase === "passing" && info.has_passed ? html` <span class="tag">passed</span>` : "";
    // Whose turn, in words on the seat as well as by its ring (a colour alone says nothing to some).
    const acting = view.phase === "playing" && view.turn === seat;
    if (acting) classes.push("turn");
    const turn = acting ? html` <span class="tag act">to play</span>` : "";
    const clock = view.clock?.seats[seat];
    const away = clock?.away ? html` <span class="tag away" title="timed out ${clock.timeouts_in_a_row} times in a row: a bot plays for them">away</span>` : "";
    const countdown = clock?.deadline
      ? html` <span class="countdown" data-deadline="${clock.deadline}" title="time left to decide (reserve ${Math.round(clock.reserve_seconds)} s)">${timeLeft(clock.deadline)}</span>`
      : "";
    return html`<div class="${classes.join(" ")}" data-seat="${seat}">
      <div class="name">${nameHtml(view.seats, seat)}${levelTag(view.seats, seat)}${passed}${turn}${away}${countdown}</div>
      <div class="figures"><span title="total score">score <b>${view.scores[seat]}</b></span>
        <span title="tricks taken this hand">tricks ${tricks}</span>
        <span title="points taken this hand">pts ${info.points_this_hand}</span>
        <span title="cards in hand">${info.hand_size} cards</span></div></div>`;
  }

  // What moved since the last draw: the cards played (each animated from its seat), the trick
  // just taken (gathered to its winner), the cards a pass brought, and whether the turn came to
  // you. The first draw of the page starts from what it shows: nothing moves.
  function notice() {
    // Drawn twice in one task (an answer, then the redraw after it): the same motion both times,
    // else the second draw would wipe what the first just started.
    if (noticed && noticed.view === view) return noticed.motion;
    const plays = [...view.tricks.flatMap((t) => t.cards), ...view.current_trick].map((p) => p.card);
    const received = Boolean(view.received_cards?.length) && view.phase !== "passing";
    const myTurn = view.phase === "playing" && view.turn != null && view.turn === view.seat;
    const motion = { fresh: new Set(), taken: null, received: false, turn: false };
    if (drawn && drawn.hand === view.hand_number) {
      for (const card of plays) if (!drawn.plays.has(card)) motion.fresh.add(card);
      if (view.tricks.length > drawn.tricks) motion.taken = view.tricks[view.tricks.length - 1];
      motion.received = received && !drawn.received;
      motion.turn = myTurn && !drawn.myTurn;
    } else if (drawn) {
      for (const card of view.current_trick) motion.fresh.add(card.card);
      motion.turn = myTurn;
    }
    drawn = { hand: view.hand_number, plays: new Set(plays), tricks: view.tricks.length, received, myTurn };
    // The sounds, if the reader turned them on: one knock a card, then the trick's sweep.
    let at = 0;
    if (motion.received) sound("pass");
    for (let i = 0; i < motion.fresh.size; i++, at += 0.09) sound("play", at);
    if (motion.taken) sound("take", at + 0.45);
    if (motion.turn) sound("turn", at + (motion.taken ? 0.8 : 0.15));
    noticed = { view, motion };
    queueMicrotask(() => {
      noticed = null;
    });
    return motion;
  }

  // Where a seat sits, seen from this page's seat (at the bottom).
  function positionOf(seat, base) {
    const players = view.seats.length;
    return seatPositions(players)[(seat - base + players) % players];
  }

  // Each seat's card lies in front of that seat. A trick just taken is drawn once more over the
  // next one's place, and gathered to its winner (an animation; none under reduced motion).
  function trickHtml(base, motion) {
    const slot = ({ seat, card }) =>
      html`<div class="slot pos-${positionOf(seat, base)}${motion.fresh.has(card) ? " played" : ""}">${cardHtml(card)}</div>`;
    let caption = "";
    const previous = view.tricks[view.tricks.length - 1];
    if (!view.current_trick.length && previous && view.phase === "playing") {
      caption = `Trick ${view.tricks.length} to ${seatName(view.seats, previous.winner)}` +
        (previous.points ? ` (${previous.points} pt)` : "");
    }
    const taken = motion.taken
      ? html`<div class="trick taken to-${positionOf(motion.taken.winner, base)}" aria-hidden="true">${motion.taken.cards.map(slot)}</div>`
      : "";
    return html`${taken}<div class="trick">${view.current_trick.map(slot)}<div class="caption">${caption}</div></div>`;
  }

  // The trick taken last, on request: its cards around a small table, its winner named.
  function lastTrick() {
    return view.phase === "playing" || view.phase === "moon_choice" ? view.tricks[view.tricks.length - 1] : null;
  }

  function lastTrickHtml(base) {
    const previous = lastTrick();
    if (!showLast || !previous) return "";
    const slots = previous.cards.map(
      ({ seat, card }) =>
        html`<div class="slot pos-${positionOf(seat, base)}${seat === previous.winner ? " winner" : ""}">${cardHtml(card)}</div>`,
    );
    const points = previous.points ? `, ${previous.points} pt` : "";
    return html`<section id="last-trick-panel" class="lasttrick" aria-labelledby="last-trick-title">
      <h2 id="last-trick-title">Trick ${view.tricks.length}: ${seatName(view.seats, previous.winner)}${points}</h2>
      <div class="minitrick">${slots}</div></section>`;
  }

  // The last trick in words, for the live region when it is opened.
  function sayLastTrick() {
    const previous = lastTrick();
    if (!previous) return;
    const who = (seat) => (seat === view.seat ? "you" : seatName(view.seats, seat));
    const cards = previous.cards.map(({ seat, card }) => `${who(seat)} played the ${cardName(card)}`);
    announcer.textContent = `Last trick, taken by ${who(previous.winner)}: ${cards.join(", ")}.`;
  }

  function toolsHtml() {
    const previous = lastTrick();
    const open = showLast && previous != null;
    return html`<div class="tools">
      <button type="button" id="last-trick" class="small" aria-pressed="${open ? "true" : "false"}"
        aria-keyshortcuts="L" title="Show the last trick (L)"${previous ? "" : html` disabled`}>Last trick <kbd>L</kbd></button>
      <label class="soundpick"><input type="checkbox" id="sound"${soundOn() ? html` checked` : ""}> Sound</label></div>`;
  }

  // The hand is one Tab stop (a toolbar: the arrows, Home and End move between its playable
  // cards, Enter or Space plays or chooses one): the card that had the focus, else the first
  // playable one, is the one in the Tab order (a roving tabindex).
  function handHtml(current, motion) {
    if (view.seat == null || !view.hand) return "";
    const myTurn = view.awaiting.includes(view.seat) && !busy;
    const legal = new Set(myTurn ? view.legal_cards : []);
    const received = new Set(view.received_cards ?? []);
    const sorted = sortHand(view.hand);
    const stop = legal.has(current) ? current : sorted.find((card) => legal.has(card));
    const passing = view.phase === "passing" && myTurn;
    const cards = sorted.map((card) => {
      const classes = [];
      if (legal.has(card)) classes.push("legal");
      if (selected.has(card)) classes.push("selected");
      if (received.has(card)) classes.push("received");
      if (received.has(card) && motion.received) classes.push("arrive");
      return cardHtml(card, {
        button: true,
        disabled: !legal.has(card),
        classes,
        pressed: passing ? selected.has(card) : null,
        tabindex: card === stop ? 0 : -1,
      });
    });
    return html`<div class="hand" role="toolbar" aria-label="Your hand">${cards}</div>`;
  }

  function actionHtml() {
    const me = view.seat;
    if (view.phase === "finished") {
      const winners = view.winners.map((s) => seatName(view.seats, s)).join(" and ");
      // A player silent too long in a game without a clock left it (GameAbandoned).
      const left = view.abandoned_by != null ? `${seatName(view.seats, view.abandoned_by)} left the game. ` : "";
      return html`<div class="banner over"><b>Game over.</b> ${left}${winners} won.
        <a href="#/replay/${segment(gameId)}/${segment(view.hand_number)}">Replay the last hand</a> ·
        <a href="#/scoreboard/${segment(gameId)}">Scoreboard</a></div>`;
    }
    if (me == null) {
      const open = view.seats.filter((s) => s.name == null && s.bot == null);
      const join = open.length
        ? html`<form class="join"><input name="name" placeholder="Your name" required maxlength="64">
           <button class="primary">Take a seat</button></form>`
        : "";
      return html`<div class="banner">Watching: public information only.${join}</div>`;
    }
    if (view.seats[me]?.bot != null && !["finished", "expired"].includes(view.phase)) {
      const why = view.clock?.seats[me]?.away ? "Your time ran out: a bot is playing your seat." : "A bot is playing your seat.";
      return html`<div class="banner">${why} <button type="button" class="primary" id="back">I'm back</button></div>`;
    }
    if (view.phase === "passing" && view.awaiting.includes(me)) {
      const target = passTarget(view.pass_direction, me, view.seats.length);
      const to = target != null ? ` to ${seatName(view.seats, target)} (${view.pass_direction})` : ` (${view.pass_direction})`;
      const ready = selected.size === view.cards_to_pass;
      return html`<div class="banner">Choose ${view.cards_to_pass} cards to pass${to}: ${selected.size} chosen.
        <button type="button" class="primary" id="pass"${ready && !busy ? "" : html` disabled`}>Pass</button></div>`;
    }
    if (view.phase === "moon_choice" && view.awaiting.includes(me)) {
      // The shot's kind and points come with the view (the rules' moon or sun points).
      const kind = view.shot?.kind ?? "moon";
      const points = view.shot?.points ?? 26;
      return html`<div class="banner">You shot the ${kind}!
        <button type="button" class="primary" data-moon="add_to_others">Add ${points} to the others</button>
        <button type="button" class="primary" data-moon="subtract_from_shooter">Take ${points} off your score</button></div>`;
    }
    if (view.phase === "playing" && view.turn === me) return html`<div class="banner">Your turn: play a highlighted card.</div>`;
    if (view.received_cards?.length && !view.tricks.length && !view.current_trick.length) {
      return html`<div class="banner">You received ${view.received_cards.map((c) => html`${cardHtml(c, { chip: true })} `)}</div>`;
    }
    return html`<div class="banner muted">Waiting for the others…</div>`;
  }

  // What has the keyboard in the table, as a selector that finds it again after a redraw.
  function focusedControl() {
    const active = document.activeElement;
    if (!active || !table.contains(active)) return null;
    if (active.matches(".hand .card")) return `.hand .card[data-card="${CSS.escape(active.dataset.card)}"]`;
    if (active.id) return `#${CSS.escape(active.id)}`;
    if (active.dataset.moon) return `[data-moon="${CSS.escape(active.dataset.moon)}"]`;
    return null;
  }

  function draw() {
    const focused = document.activeElement?.closest?.(".hand .card")?.dataset.card;
    const control = focusedControl();
    // The focus is the table's to move when it is in the table or nowhere (on the page's body:
    // the element that had it was redrawn away); never taken from the rest of the page.
    const active = document.activeElement;
    const ours = !active || active === document.body || table.contains(active);
    // A name being typed into the join form survives the re-render.
    const typing = $(".join input", table);
    const typed = typing ? { value: typing.value, focus: document.activeElement === typing } : null;
    const base = view.seat ?? 0;
    document.body.dataset.version = String(view.version);
    table.dataset.phase = view.phase;
    table.dataset.version = String(view.version);
    table.classList.toggle("spectator", view.seat == null);
    const players = view.seats.length;
    const seats = seatPositions(players).map((position, offset) => seatHtml((base + offset) % players, position));
    const motion = notice();
    const mineToAct = view.seat != null && view.awaiting.includes(view.seat) && !["finished", "expired"].includes(view.phase);
    render(
      table,
      html`
      <div class="status${mineToAct ? " mine" : ""}"><span class="line">${statusLine()}${arrangedBadge(view)}</span>${turnClockHtml()}${toolsHtml()}</div>
      <div class="felt">${seats}${trickHtml(base, motion)}${lastTrickHtml(base)}</div>
      <div class="actions">${inviteHtml(gameId, view)}${actionHtml()}</div>
      ${handHtml(focused, motion)}
      <aside class="lasthand">${lastHand ? handSummaryHtml(view.seats, lastHand, gameId) : ""}</aside>`,
    );
    const joinInput = $(".join input", table);
    if (joinInput && typed) {
      joinInput.value = typed.value;
      if (typed.focus) joinInput.focus();
    }
    // Keep the keyboard where it was (the same card, the Pass button), else on the hand's
    // stop on your turn, or when the card that had it was played.
    const again = control && $(control, table);
    const hand = $(".hand", table);
    if (again && !again.disabled) {
      again.focus({ preventScroll: true });
    } else if (hand && ours && (focused || view.awaiting.includes(view.seat))) {
      $('.card[tabindex="0"]:not(:disabled)', hand)?.focus({ preventScroll: true });
    }
  }

  table.addEventListener("click", (event) => {
    const card = event.target.closest(".hand .card");
    if (card && !card.disabled) {
      const code = card.dataset.card;
      if (view.phase === "passing") {
        if (selected.has(code)) selected.delete(code);
        else if (selected.size < view.cards_to_pass) selected.add(code);
        draw();
      } else if (view.phase === "playing") {
        act(() => api.play(gameId, mine.token, code));
      }
      return;
    }
    if (event.target.closest("#pass")) {
      act(async () => {
        const result = await api.pass(gameId, mine.token, [...selected]);
        selected = new Set();
        return result;
      });
      return;
    }
    if (event.target.closest("#copy-invite")) {
      copyInvitation($("#invite-link", table)).then((copied) => {
        announcer.textContent = copied ? "Invitation link copied." : "Invitation link selected: copy it.";
      });
      return;
    }
    if (event.target.closest("#last-trick")) {
      toggleLastTrick();
      return;
    }
    if (event.target.closest("#back")) {
      act(() => api.back(gameId, mine.token, view.seat));
      return;
    }
    const moon = event.target.closest("[data-moon]");
    if (moon) act(() => api.moon(gameId, mine.token, moon.dataset.moon));
  });

  table.addEventListener("submit", (event) => {
    event.preventDefault();
    const name = event.target.name.value.trim();
    attempt(async () => {
      const joined = await api.join(gameId, name, null);
      saveSeat(gameId, { seat: joined.seat, token: joined.token, name });
      location.hash = `#/game/${segment(gameId)}`;
      if (watch === false) window.dispatchEvent(new HashChangeEvent("hashchange"));
    });
  });

  function toggleLastTrick(open = !showLast) {
    showLast = open && lastTrick() != null;
    draw();
    if (showLast) sayLastTrick();
  }

  // Sound is off unless turned on here (kept in this browser).
  table.addEventListener("change", (event) => {
    if (event.target.id === "sound") setSound(event.target.checked);
  });

  // Arrows choose a card, Enter or Space (the focused button's click) plays or selects it. L
  // shows or hides the last trick, Escape hides it: single keys that act only while the
  // keyboard is in the table (never while typing), so they cannot fire by accident elsewhere.
  table.addEventListener("keydown", (event) => {
    const typing = event.target.closest?.("input, select, textarea");
    const plain = !event.ctrlKey && !event.metaKey && !event.altKey;
    if (!typing && plain && (event.key === "l" || event.key === "L")) {
      toggleLastTrick();
      event.preventDefault();
      return;
    }
    if (event.key === "Escape" && showLast) {
      toggleLastTrick(false);
      return;
    }
    if (!["ArrowLeft", "ArrowRight", "Home", "End"].includes(event.key)) return;
    if (event.target.closest?.("input, select, textarea")) return; // the join form keeps its keys
    const cards = [...table.querySelectorAll(".hand .card:not(:disabled)")];
    if (!cards.length) return;
    const index = cards.indexOf(document.activeElement);
    let next = 0;
    if (event.key === "ArrowRight") next = index < 0 ? 0 : Math.min(index + 1, cards.length - 1);
    if (event.key === "ArrowLeft") next = index < 0 ? cards.length - 1 : Math.max(index - 1, 0);
    if (event.key === "End") next = cards.length - 1;
    cards[next].focus();
    event.preventDefault();
  });

  // The card with the focus (by keyboard or a click) is the hand's one Tab stop.
  table.addEventListener("focusin", (event) => {
    const card = event.target.closest?.(".hand .card");
    if (!card) return;
    for (const other of table.querySelectorAll(".hand .card")) other.tabIndex = other === card ? 0 : -1;
  });

  accept(await load());
  // The last scored hand: the one before this, or this one once the game is over (unless a
  // player left it: then it was never scored).
  const over = view.phase === "finished" && view.abandoned_by == null;
  const scored = over ? view.hand_number : view.hand_number - 1;
  if (scored >= 1 && !lastHand) {
    const previous = await attempt(() => api.hand(gameId, scored));
    if (previous?.points_taken) {
      lastHand = previous;
      draw();
    }
  }
  startStream();
  const ticking = setInterval(() => tickCountdowns(table), 250);
  return () => {
    clearInterval(ticking);
    stop?.();
    setConnection(null);
  };
}
