// Replies and pushes cross (the tablet and the phone): each region keeps the newest it has shown.
//
// Every region a fragment can bring carries the scene's data-seq (and a private part its
// sheets' data-sheet-seq, "night.ledger"). A tap's reply (htmx's answer) and the pushes of
// the scene's changes come by two roads and land in either order:
// - a reply rendered before a push can land after it (a loaded server, a slow network): its
//   region, older than the one shown, must not go back in time, nor its refusal (the
//   sentence is put in place by static/js/refusal.js);
// - a reply rendered after another's change shows that change too (a phone's challenge
//   prompts with the next prompt in them) and can land before a push of an earlier change
//   that brings the whole part around it (the private part): the region inside, newer than
//   the push's, is kept as shown, so the next prompt does not vanish and come back unseen.
// The page still converges: the newer pushes come, and bring every region to the scene's state.
(function () {
  "use strict";

  function value(el, attr) {
    const v = el && el.getAttribute ? el.getAttribute(attr) : null;
    return v === null || v === undefined ? null : v;
  }

  // data-seq: one number; data-sheet-seq: "night.ledger", older if either part is smaller.
  function older(incoming, shown) {
    for (const attr of ["data-seq", "data-sheet-seq"]) {
      const a = value(incoming, attr);
      const b = value(shown, attr);
      if (a === null || b === null) continue;
      const pa = a.split(".").map(Number);
      const pb = b.split(".").map(Number);
      if (pa.some((x, i) => x < (pb[i] || 0))) return true;
    }
    return false;
  }

  // The regions inside an incoming fragment that are older than the ones shown are replaced
  // by copies of those shown (values and all: a copied form keeps what was picked in it).
  // True when any was.
  function keepNewerInside(incoming, root) {
    let kept = false;
    incoming.querySelectorAll("[id][data-seq]").forEach((part) => {
      if (part === root || !incoming.contains(part)) return; // inside a region already kept
      const shown = document.getElementById(part.id);
      if (shown && older(part, shown)) {
        part.replaceWith(shown.cloneNode(true));
        kept = true;
      }
    });
    return kept;
  }

  // A push (htmx's websocket extension swaps each of its fragments out of band).
  document.addEventListener("htmx:oobBeforeSwap", (event) => {
    const detail = event.detail;
    const fragment = detail.fragment;
    const incoming = fragment && fragment.nodeType === 11 ? fragment.firstElementChild : fragment;
    if (!incoming) return;
    if (older(incoming, detail.target)) {
      detail.shouldSwap = false;
      return;
    }
    keepNewerInside(fragment, incoming);
  });

  // A reply. On window, so after every listener on the document that asks for a refusal to be
  // swapped in (forms.js, phone.js, tablet.js): an older one is not, whatever it says.
  window.addEventListener("htmx:beforeSwap", (event) => {
    const detail = event.detail;
    const target = detail.target;
    const html = detail.serverResponse;
    if (!detail.shouldSwap || !target || !target.isConnected || typeof html !== "string") return;
    if (html.indexOf("data-seq=") < 0 && html.indexOf("data-sheet-seq=") < 0) return;
    const box = document.createElement("template");
    box.innerHTML = html;
    const incoming = box.content.firstElementChild;
    if (!incoming) return;
    if (incoming.id && incoming.id === target.id && older(incoming, target)) {
      detail.shouldSwap = false;
      return;
    }
    if (keepNewerInside(box.content, incoming.id === target.id ? incoming : null)) {
      detail.serverResponse = box.innerHTML;
    }
  });
})();
