// The live connection: htmx's websocket extension swaps pushed fragments in by id.
// Here only what htmx does not do: show when the phone lost the connection.
document.addEventListener("htmx:wsClose", () => {
  const status = document.getElementById("live-status");
  if (status) {
    status.textContent = "reconnecting…";
    status.classList.remove("connected");
  }
});
