// The storyteller's tablet: what htmx does not do for the board's posts.
// - A refused post (400: a form it could not read; 409: the scene refused the change) still
//   brings its panel back with the sentence in it: swap it in.
// - Replies and pushes can cross (two taps in flight, a push of a later change): a reply older
//   than what the board shows is not swapped in, a refusal neither (static/js/crossing.js).
// - The storyteller's next control in the fight (whom it waits on, the resolve form, the round's
//   next step) is brought into view inside the stage after every change (issue 19), unless
//   the storyteller is typing elsewhere.
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

  function nextControl() {
    const fight = document.getElementById("combat");
    if (!fight) return null;
    return (
      fight.querySelector(
        ".waiting, form.resolve-form, form.committed-form, form.pursue-form, .initiative form[id^='st-ini-']"
      ) ||
      fight.querySelector("button.primary")
    );
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

  document.addEventListener("htmx:afterSettle", bringNext);
  document.addEventListener("htmx:wsAfterMessage", bringNext);
})();
