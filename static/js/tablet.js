// The storyteller's tablet: what htmx does not do for the board's posts.
// - A refused post (400: a form it could not read; 409: the scene refused the change) still
//   brings the board back with the sentence in it: swap it in.
// - Replies can cross (two taps in flight): a reply older than the board shown (by data-seq)
//   is not swapped in, so the board never goes back in time.
(function () {
  "use strict";

  function seqOf(html) {
    const match = /data-seq="(\d+)"/.exec(html || "");
    return match ? parseInt(match[1], 10) : null;
  }

  document.addEventListener("htmx:beforeSwap", (event) => {
    const target = event.detail.target;
    if (!target || target.id !== "scene-board") return;
    const status = event.detail.xhr.status;
    if (status === 400 || status === 409) {
      event.detail.shouldSwap = true;
      event.detail.isError = false;
    }
    const shown = parseInt(target.getAttribute("data-seq"), 10);
    const reply = seqOf(event.detail.serverResponse);
    if (reply !== null && !Number.isNaN(shown) && reply < shown) event.detail.shouldSwap = false;
  });
})();
