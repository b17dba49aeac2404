// The phone's "now" (issue 19): what this player must do is in view when it arrives, and the
// phone buzzes only then.
//
// - A prompt that waits on this player carries data-now="<family>:<step>" (one key per turn or
//   step: another side's move never makes a new one). A key not seen before brings its prompt
//   into view; arriving by a push it buzzes with the "your turn" pattern, unless it is this
//   phone's own tap's doing (a push while the tap is under way, of the same prompt, or of a
//   tap made outside any prompt: a start form). When the answer is in (htmx has swapped it
//   by then) its keys are seen: a new key after that is another's doing, so the other
//   side's throw a moment after this phone's own still buzzes. An answer rendered after
//   another's change can bring that change's prompt before its push: the same rule as for a
//   push while the tap is under way (a key of another family than the tapped prompt's buzzes),
//   so whichever road brings the prompt first, it buzzes once. Nothing else buzzes.
// - A refused tap's answer is swapped in, and its sentence (.flash[role=alert], read out by
//   screen readers) brought into view.
(function () {
  "use strict";

  const YOUR_TURN = [300, 120, 300, 120, 600]; // long, long, longer: nothing else buzzes so
  const SENDING_MS = 5000; // a tap with no word back for this long no longer holds a buzz back

  let seen = null; // every now key this page has shown (a reconnect shows no key as new)
  let sentAt = null; // this phone's own post under way since: a push meanwhile may be its echo
  let tapped = ""; // what that tap answered: the family of its prompt's key, "*" for none

  function inView(el) {
    const box = el.getBoundingClientRect();
    return box.top >= 0 && box.bottom <= window.innerHeight;
  }

  function typing() {
    const el = document.activeElement;
    return !!(el && el.matches && el.matches("input:not([type=hidden]), textarea") && !el.closest("[data-now]"));
  }

  function bring(el) {
    if (!inView(el) && !typing()) el.scrollIntoView({ block: "start", behavior: "instant" });
  }

  // A key is "<family>:<step>": a step of the same prompt (a challenge's next throw) is one
  // family, a new turn (initiative, then declare) another.
  function family(key) {
    return String(key).split(":")[0];
  }

  function buzz() {
    if (navigator.vibrate) navigator.vibrate(YOUR_TURN);
    const root = document.querySelector("[ws-connect^='/ws/scenes/']");
    if (root) root.dataset.buzzed = String((parseInt(root.dataset.buzzed || "0", 10) || 0) + 1);
  }

  // fromPush: a push brought the page as it is; else an answer did, to a tap on the prompt of
  // family ``answered`` ("*": a tap outside any prompt; "": no answer, the page as loaded).
  function checkNow(fromPush, answered) {
    const els = [...document.querySelectorAll("#prompts [data-now]")];
    const first = seen === null;
    if (first) seen = new Set();
    const fresh = els.filter((el) => !seen.has(el.dataset.now));
    fresh.forEach((el) => seen.add(el.dataset.now));
    if (!fresh.length) return;
    bring(fresh[0]);
    if (first) return;
    const tap = fromPush ? tapped : answered || "*";
    const another = fresh.some((el) => tap !== "*" && family(el.dataset.now) !== tap);
    if (another || (fromPush && !underWay())) buzz();
  }

  // A refused tap (400: a form the server could not read; 409: the scene refused it) still
  // brings its part back, with the sentence in it: swap it in, or the tap seems to do nothing.
  document.addEventListener("htmx:beforeSwap", (event) => {
    const target = event.detail.target;
    const status = event.detail.xhr && event.detail.xhr.status;
    if (!target || !target.closest || !target.closest(".phone")) return;
    if (status === 400 || status === 409) {
      event.detail.shouldSwap = true;
      event.detail.isError = false;
      setTimeout(showRefusal, 0); // once swapped in
    }
  });

  // Under the sticky freshness badge is out of sight too.
  function covered(el) {
    const badge = document.getElementById("scene-freshness");
    if (!badge) return false;
    const a = el.getBoundingClientRect();
    const b = badge.getBoundingClientRect();
    return a.top < b.bottom && a.bottom > b.top && a.left < b.right && a.right > b.left;
  }

  function showRefusal() {
    const flash = document.querySelector(".phone .flash[role=alert]");
    if (flash && (!inView(flash) || covered(flash))) {
      flash.scrollIntoView({ block: "start", behavior: "instant" }); // its scroll-margin clears the badge
    }
  }

  function underWay() {
    return sentAt !== null && Date.now() - sentAt < SENDING_MS;
  }

  function posting(event) {
    const verb = event.detail.requestConfig && event.detail.requestConfig.verb;
    return !!verb && verb !== "get";
  }
  // The answer's end, read off the request itself: a push may have taken the form away before
  // it came, and then htmx says nothing of it.
  document.addEventListener("htmx:beforeSend", (event) => {
    if (!posting(event) || !event.detail.xhr) return;
    const elt = event.detail.elt;
    const now = elt && elt.closest ? elt.closest("[data-now]") : null;
    const answered = now ? family(now.dataset.now) : "*";
    tapped = answered;
    sentAt = Date.now();
    const xhr = event.detail.xhr;
    xhr.addEventListener("loadend", () => {
      checkNow(false, answered); // the answer's keys, swapped in on "load": this tap's doing
      sentAt = null;
    });
  });

  document.addEventListener("htmx:wsAfterMessage", () => checkNow(true));
  document.addEventListener("htmx:afterSettle", (event) => {
    if (!event.detail.requestConfig) return; // a push settles too: wsAfterMessage saw it
    checkNow(false);
  });

  function start() {
    if (document.querySelector(".phone")) checkNow(false);
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
