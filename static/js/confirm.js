// Taps that give something up or spend something ask once (issue 19): a button with
// data-confirm="<words>" does nothing on its first tap but say those words in its place; a
// second tap within a few seconds sends it. No confirm() dialog (it blocks the page and a
// Content-Security-Policy page has no inline handler to call it from).
(function () {
  "use strict";

  const ARMED_MS = 4000;

  function disarm(button) {
    if (button.dataset.armed !== "1") return;
    delete button.dataset.armed;
    button.textContent = button.dataset.said || button.textContent;
    button.classList.remove("confirming");
  }

  function arm(button) {
    button.dataset.armed = "1";
    button.dataset.said = button.textContent;
    button.textContent = button.dataset.confirm;
    button.classList.add("confirming");
    setTimeout(() => disarm(button), ARMED_MS);
  }

  // Capture: before htmx (or the browser) submits the form the button belongs to.
  document.addEventListener(
    "click",
    (event) => {
      const button = event.target.closest && event.target.closest("button[data-confirm]");
      if (!button || button.dataset.armed === "1") return; // the second tap goes
      event.preventDefault();
      event.stopImmediatePropagation();
      arm(button);
    },
    true
  );
})();
