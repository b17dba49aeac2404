// A scanned login card's address carries its code after the "#": browsers never send that
// part, so the code is in no server log nor Referer. Fill it in, take it off the address bar,
// and send the form once (a refused code comes back on /card/ without "#", so no loop).
(function () {
  "use strict";

  function start() {
    const code = decodeURIComponent(window.location.hash.slice(1)).trim();
    const form = document.getElementById("card-form");
    if (!code || !form) return;
    history.replaceState(null, "", window.location.pathname);
    form.elements.code.value = code;
    form.submit();
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
