// What inline handlers did before the Content-Security-Policy forbade them (no inline script,
// no hx-on):
// - A form with data-confirm asks before it is sent (the chronicle page's game night buttons).
// - A refused post (400: a form it could not read; 409: the scene refused the change) brings its
//   region back with the sentence in it: swapped in where the region or form says
//   data-swap-refused.
// - Too many taps (429): the sentence shows beside the control that was tapped, and nothing
//   else changes; it goes with the next swap of that region or after a while.
(function () {
  "use strict";

  document.addEventListener("submit", (event) => {
    const form = event.target;
    const question = form && form.getAttribute && form.getAttribute("data-confirm");
    if (question && !window.confirm(question)) event.preventDefault();
  });

  function sentenceOf(html) {
    const doc = new DOMParser().parseFromString(html || "", "text/html");
    const alert = doc.querySelector("[role=alert]");
    return alert ? alert.textContent.trim() : "";
  }

  function besideTheControl(elt, text) {
    const control = (elt.closest && elt.closest("form")) || elt;
    let flash = control.nextElementSibling;
    if (!flash || !flash.classList.contains("throttled")) {
      flash = document.createElement("p");
      flash.className = "flash error throttled";
      flash.setAttribute("role", "alert");
      control.insertAdjacentElement("afterend", flash);
    }
    flash.textContent = text;
    clearTimeout(flash.timer);
    flash.timer = setTimeout(() => flash.remove(), 8000);
  }

  document.addEventListener("htmx:beforeSwap", (event) => {
    const detail = event.detail;
    const status = detail.xhr ? detail.xhr.status : 0;
    if (status === 429) {
      detail.shouldSwap = false;
      detail.isError = false;
      const elt = (detail.requestConfig && detail.requestConfig.elt) || detail.elt;
      besideTheControl(elt, sentenceOf(detail.serverResponse) || "Too many taps: wait a second.");
      return;
    }
    if ((status === 400 || status === 409) && event.target.closest("[data-swap-refused]")) {
      detail.shouldSwap = true;
      detail.isError = false;
    }
  });
})();
