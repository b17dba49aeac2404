// The live connection: htmx's websocket extension swaps pushed fragments in by id.
// Here only what htmx does not do: show when the phone lost the connection, and why.
// Codes 4000-4999 are the server's own refusals (combat/consumers.py); htmx does not retry
// them, so the badge must not promise a reconnect.
const CLOSED_FOR_GOOD = {
  4001: "logged out",
  4401: "not logged in",
  4404: "not connected",
};

document.addEventListener("htmx:wsClose", (event) => {
  const status = document.getElementById("live-status");
  if (!status) {
    return;
  }
  const code = event.detail && event.detail.event ? event.detail.event.code : 0;
  status.textContent = CLOSED_FOR_GOOD[code] || "reconnecting…";
  status.classList.remove("connected");
});
