// The analysis of a finished hand beside its replay (issue 23, docs/analysis.md): what each
// decision was worth to the seat that made it, the best alternative, the marks, and an accuracy
// line per seat. Asked for with POST /games/{id}/hands/{n}/analysis (a job) and followed over
// its status URL as Server-Sent Events (polled if the stream breaks); everything shown goes
// through html`` (text, never markup).

import { BASE, call } from "./api.js";
import { $, attempt, html, render, seatName, segment } from "./ui.js";

const POLL_MS = 1000;
const MARK_SIGN = { inaccuracy: "?!", mistake: "?", blunder: "??" };

const path = (gameId, number) => `/games/${segment(gameId)}/hands/${segment(number)}/analysis`;
const fmt = (x) => (x > 0 ? "+" : "") + x.toFixed(2);

// The decision a replay step shows: the play of that step, the passes of the pass step, the
// moon choice of the score step.
export function decisionsOf(analysis, step) {
  if (!analysis) return [];
  if (step.card) {
    return analysis.decisions.filter(
      (d) => d.kind === "play" && d.trick === step.trickNumber && d.seat === step.seat && d.played === step.card,
    );
  }
  if (step.received) return analysis.decisions.filter((d) => d.kind === "pass");
  if (step.scored) return analysis.decisions.filter((d) => d.kind === "moon");
  return [];
}

function optionHtml(option) {
  return html`${option.option || "no pass"} ${fmt(option.value)} ± ${option.interval.toFixed(2)}`;
}

function decisionHtml(seats, d) {
  const played = d.options.find((o) => o.option === d.played);
  const best = d.options[0];
  const mark = d.mark ? html` <span class="mark ${d.mark}" data-mark="${d.mark}">${MARK_SIGN[d.mark]} ${d.mark}</span>` : "";
  const what = d.kind === "pass" ? "passed" : d.kind === "moon" ? "chose" : "played";
  const head = html`<b>${seatName(seats, d.seat)}</b> ${what} <code>${d.played || "nothing"}</code>${mark}`;
  if (d.forced) return html`<li class="evaluation forced" data-kind="${d.kind}">${head}: forced (${d.note || "one option"})</li>`;
  const value = played ? html`, worth ${optionHtml(played)}` : "";
  const loss = d.loss > 0 ? html`; loses ${d.loss.toFixed(2)} ± ${d.loss_interval.toFixed(2)} against the best` : "; the best";
  const alternative =
    best && best.option !== d.played ? html`<br><span class="muted">best: <code>${best.option || "no pass"}</code> ${fmt(best.value)}</span>` : "";
  const note = d.note ? html`<br><span class="muted">${d.note}</span>` : "";
  return html`<li class="evaluation" data-kind="${d.kind}">${head}${value}${loss}${alternative}${note}</li>`;
}

// One plain line per seat (issue 44: "accuracy 100.0% · 7 choice(s), 7 forced ... loss 0.38"
// read wrong). A forced decision (one option, or options that play alike) is neither good nor
// bad, so it is only counted; the share unmarked and the points given away are of real choices.
function plural(count, one, many) {
  return `${count} ${count === 1 ? one : many}`;
}

function accuracyHtml(seats, analysis) {
  const rows = analysis.seats.map((s) => {
    const who = seatName(seats, s.seat);
    const all = s.decisions + s.forced;
    if (!s.decisions) {
      return html`<li class="accuracy" data-seat="${s.seat}"><b>${who}</b>: no real choice this hand
        (${plural(all, "decision", "decisions")}, each with one option or options that play alike)</li>`;
    }
    const marks = [
      [s.inaccuracies, "inaccuracy", "inaccuracies"],
      [s.mistakes, "mistake", "mistakes"],
      [s.blunders, "blunder", "blunders"],
    ].filter(([count]) => count > 0);
    const marked = marks.length ? marks.map(([count, one, many]) => plural(count, one, many)).join(", ") : "no move marked";
    return html`<li class="accuracy" data-seat="${s.seat}"><b>${who}</b>: ${s.decisions} of ${plural(all, "decision", "decisions")} a real choice
      (the others had one option) · ${marked}, ${s.accuracy.toFixed(0)}% of choices unmarked
      · about ${s.total_loss.toFixed(1)} points given away by its choices, against the best option</li>`;
  });
  return html`<ul class="accuracies">${rows}</ul>`;
}

function marksHtml(seats, analysis, steps) {
  const marked = analysis.decisions.filter((d) => d.mark);
  if (!marked.length) return html`<p class="muted marks-none">No move marked.</p>`;
  const items = marked.map((d) => {
    const at = steps.findIndex((step) => decisionsOf(analysis, step).includes(d));
    const where = d.kind === "play" ? `trick ${d.trick}` : d.kind;
    return html`<li class="marked" data-mark="${d.mark}"><button type="button" data-goto="${at}">${where}</button>
      ${seatName(seats, d.seat)} <code>${d.played}</code> <span class="mark ${d.mark}">${MARK_SIGN[d.mark]} ${d.mark}</span></li>`;
  });
  return html`<ol class="marks">${items}</ol>`;
}

// The panel: a button to ask for the analysis, its progress, then the figures. ``goTo(i)`` moves
// the replay to step i; the returned ``show(step)`` is called by the replay at each step.
export function analysisPanel(panel, { gameId, number, record, steps, goTo }) {
  let analysis = null;
  let current = null;
  let timer = null;
  let source = null;

  function showStep(step) {
    current = step;
    const here = $(".here", panel);
    if (!here || !analysis) return;
    const decisions = decisionsOf(analysis, step);
    render(
      here,
      decisions.length
        ? html`<ul class="evaluations">${decisions.map((d) => decisionHtml(record.seats, d))}</ul>`
        : html`<p class="muted">No decision at this step.</p>`,
    );
  }

  function showDone(result) {
    analysis = result;
    render(
      panel,
      html`<h2>Analysis</h2>
        <div class="here"></div>
        <h3>Marked moves</h3>${marksHtml(record.seats, result, steps)}
        <h3>Accuracy</h3>${accuracyHtml(record.seats, result)}
        <p class="muted">${result.budget.samples} sampled deals per decision · values are the seat's points less the others' average (lower is better)</p>`,
    );
    if (current) showStep(current);
  }

  function showStatus(status) {
    if (status.state === "done") return showDone(status.result);
    if (status.state === "failed") {
      render(panel, html`<h2>Analysis</h2><p class="bad">The analysis failed: ${status.detail ?? ""}</p>`);
      return;
    }
    showProgress(status);
    if (!source) follow();
  }

  function showProgress(status) {
    const progress = status.total ? html`<progress max="${status.total}" value="${status.done}"></progress> ${status.done} / ${status.total}` : "";
    render(panel, html`<h2>Analysis</h2><p class="muted progress">${status.state}… ${progress}</p>`);
  }

  // The job's progress as it happens; on any break of the stream, poll the status instead.
  function follow() {
    source = new EventSource(BASE + path(gameId, number));
    const close = () => {
      source.close();
      source = false; // polled from now on
    };
    source.addEventListener("progress", (event) => showProgress(JSON.parse(event.data)));
    for (const name of ["done", "failed"]) {
      source.addEventListener(name, (event) => {
        close();
        showStatus(JSON.parse(event.data));
      });
    }
    const poll_ = () => {
      close();
      timer = setTimeout(() => attempt(poll, { clear: false }), POLL_MS);
    };
    source.addEventListener("end", poll_);
    source.addEventListener("reconnect", poll_);
    source.onerror = poll_;
  }

  async function poll() {
    const status = await call("GET", path(gameId, number));
    if (status.state === "done" || status.state === "failed") return showStatus(status);
    showProgress(status);
    timer = setTimeout(() => attempt(poll, { clear: false }), POLL_MS);
  }

  function offer() {
    render(
      panel,
      html`<h2>Analysis</h2><p><button type="button" class="analyse">Analyse this hand</button></p>
        <p class="muted">What each decision was worth, from what its seat knew then.</p>`,
    );
    $("button.analyse", panel).addEventListener("click", () =>
      attempt(async () => showStatus(await call("POST", path(gameId, number), { body: {} }))),
    );
  }

  panel.addEventListener("click", (event) => {
    const button = event.target.closest("[data-goto]");
    if (button && Number(button.dataset.goto) >= 0) goTo(Number(button.dataset.goto));
  });

  if (!record.finished) {
    render(panel, html`<h2>Analysis</h2><p class="muted">Once the hand is over.</p>`);
  } else {
    // Asked only as "if started": a hand nobody analysed is a 204, not a failed request.
    attempt(async () => {
      const status = await call("GET", `${path(gameId, number)}?if_started=true`);
      if (status == null) offer();
      else showStatus(status);
    });
  }
  return {
    show: showStep,
    stop: () => {
      clearTimeout(timer);
      if (source) source.close();
    },
  };
}
