// The storyteller's tablet: what htmx does not do for the board's posts.
// - A refused post (400: a form it could not read; 409: the scene refused the change) still
//   brings its panel back with the sentence in it: swap it in.
// - Replies and pushes can cross (two taps in flight, a push of a later change): a reply older
//   than what the board shows is not swapped in, a refusal neither (static/js/crossing.js).
// - The storyteller's next control (in the fight: whom it waits on, the resolve form, the
//   round's next step; in a challenge: an NPC's bid, throw or result) is brought into view
//   inside the stage after every change (issue 19), unless the storyteller is typing elsewhere.
// - The board's fold of earlier challenges (#cc-earlier) is filled when it opens, a page at a
//   time: never pushed. A push or a reply draws the fold afresh (scene.js keeps it open) and
//   what it had loaded is put back at once; when its version (combat/challenges/board_reads.py:
//   a finish, a void, a rename) moved, it is asked for again down to the oldest one it held (a
//   void from it shows as voided), at most once every REFRESH ms: a fold left open in a busy
//   scene, where challenges finish every second, asks once for a burst of them, not per finish.
(function () {
  "use strict";

  document.addEventListener("htmx:beforeSwap", (event) => {
    const target = event.detail.target;
    if (!target || !target.closest || !target.closest("#scene-board")) return;
    const status = event.detail.xhr.status;
    if (status === 400 || status === 409) {
      event.detail.shouldSwap = true;
      event.detail.isError = false;
    }
  });

  // The fight's controls waiting on the storyteller, in the order they are looked for.
  const FIGHT =
    ".waiting, form.resolve-form, form.committed-form, form.pursue-form, .initiative form[id^='st-ini-']";
  // The storyteller's moves in an open challenge (issue 19: a mob run from the tablet): an
  // NPC's bid for a forming mob, then what a side the storyteller plays must do (answer, throw,
  // declare, take the result), a loser's choice or a drop-out for one who is away.
  const CHALLENGE = [
    "form.cc-mob",
    ".cc-st-side .cc-answer",
    ".cc-st-side .cc-throws",
    ".cc-st-side .cc-declare",
    ".cc-st-side .cc-byhand-confirm",
    ".cc-st-side .cc-accept",
    ".cc-st-side .cc-choose",
    ".cc-st-choose",
    "form.cc-drop-out",
  ];

  function unfolded(root, selector) {
    if (!root) return null;
    for (const el of root.querySelectorAll(selector)) {
      if (!el.closest("details:not([open])")) return el; // a finished card's fold stays shut
    }
    return null;
  }

  function nextControl() {
    const fight = document.getElementById("combat");
    const board = document.getElementById("challenge-board");
    const found = unfolded(fight, FIGHT);
    if (found) return found;
    for (const selector of CHALLENGE) {
      const move = unfolded(board, selector);
      if (move) return move;
    }
    return fight ? fight.querySelector("button.primary") : null;
  }

  function bringNext() {
    const el = nextControl();
    if (!el) return;
    const active = document.activeElement;
    const typing = active && active.matches && active.matches("input, select, textarea");
    if (typing && !el.contains(active)) return;
    const box = el.getBoundingClientRect();
    if (box.top < 0 || box.bottom > window.innerHeight) el.scrollIntoView({ block: "nearest" });
  }

  const REFRESH = 3000; // ms
  let held = null; // the last fold filled: { version, list }
  let asked = -Infinity; // when the fold was last asked for (performance.now())
  let waiting = null; // the timer of the next ask

  function oldestIn(list) {
    const folds = list.querySelectorAll("details.cc-done[id^='cc-done-']");
    return folds.length ? folds[folds.length - 1].id.slice("cc-done-".length) : "";
  }

  function fill(fold) {
    const list = fold.querySelector(".cc-earlier-list");
    if (!list) return;
    if (list.dataset.filled) {
      // opened again: a version that moved while it was closed (its ask skipped) asks now
      if (held && held.list === list && held.version !== fold.dataset.version) askSoon();
      return;
    }
    list.dataset.filled = "1";
    if (held && held.list !== list) {
      list.replaceChildren(...held.list.childNodes); // what was loaded, as it was
      held = { version: held.version, list };
      if (held.version !== fold.dataset.version) askSoon();
      return;
    }
    ask(fold, list, "");
  }

  // Ask again for what the open fold holds once REFRESH ms have passed since the last ask (at
  // once if they have): the fold then on the page, with the version it has then.
  function askSoon() {
    if (waiting) return;
    const wait = Math.max(0, asked + REFRESH - performance.now());
    waiting = setTimeout(() => {
      waiting = null;
      const fold = document.getElementById("cc-earlier");
      const list = fold && fold.open ? fold.querySelector(".cc-earlier-list") : null;
      if (!list || !held || held.list !== list || held.version === fold.dataset.version) return;
      ask(fold, list, oldestIn(list));
    }, wait);
  }

  function ask(fold, list, through) {
    const version = fold.dataset.version;
    asked = performance.now();
    fetch(fold.dataset.url + (through ? "?through=" + through : ""), {
      credentials: "same-origin",
      headers: { "HX-Request": "true" },
    })
      .then((reply) => (reply.ok ? reply.text() : Promise.reject(reply.status)))
      .then((html) => {
        // drawn afresh since: the new fold put back what was held and asks again itself
        if (!list.isConnected) return;
        list.innerHTML = html;
        if (window.htmx) window.htmx.process(list);
        held = { version, list };
      })
      .catch(() => {
        if (!list.isConnected) return;
        delete list.dataset.filled; // opened again, it asks again
        if (held && held.list === list) held = null;
        list.textContent = "Could not open the earlier challenges.";
      });
  }

  // "toggle" does not bubble: caught on its way down. A fold scene.js opens again fires it too.
  document.addEventListener(
    "toggle",
    (event) => {
      const fold = event.target;
      if (fold && fold.id === "cc-earlier" && fold.open) fill(fold);
    },
    true
  );

  document.addEventListener("htmx:afterSettle", bringNext);
  document.addEventListener("htmx:wsAfterMessage", bringNext);
})();
