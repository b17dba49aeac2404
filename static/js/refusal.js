// A refused tap's sentence is never lost (tablet and phone): when a push redraws the part a tap
// was made in while the tap is under way, htmx swaps the refusal (400, 409) into the detached
// element and says nothing; the sentence is then put into the part shown, read off the
// request itself, and brought into view.
(function () {
  "use strict";

  function inView(el) {
    const box = el.getBoundingClientRect();
    return box.top >= 0 && box.bottom <= window.innerHeight;
  }

  function place(html) {
    const said = new DOMParser().parseFromString(html || "", "text/html");
    const flash = said.querySelector(".flash[role=alert]");
    const holderId = flash && flash.parentElement ? flash.parentElement.id : "";
    const holder = holderId ? document.getElementById(holderId) : null;
    if (!holder) return;
    let shown = holder.querySelector(".flash[role=alert]");
    if (!shown || shown.textContent.trim() !== flash.textContent.trim()) {
      if (shown) shown.remove();
      shown = document.importNode(flash, true);
      holder.prepend(shown);
    }
    if (!inView(shown)) shown.scrollIntoView({ block: "center", behavior: "instant" });
  }

  document.addEventListener("htmx:beforeSend", (event) => {
    const xhr = event.detail.xhr;
    const verb = event.detail.requestConfig && event.detail.requestConfig.verb;
    if (!xhr || !verb || verb === "get") return;
    xhr.addEventListener("loadend", () => {
      if (xhr.status === 400 || xhr.status === 409) setTimeout(() => place(xhr.responseText), 50);
    });
  });
})();
