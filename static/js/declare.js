// The phone's declare form (issue 19, good defaults): it shows only what the chosen action
// needs, and starts on the kind of attack this phone declared last.
//
// - Each action's <option data-needs="target maneuver weapon"> says which fields it needs
//   (combat/rounds/selectors.py, _NEEDS); a split's attack needs the weapon too. A field not
//   needed is hidden and disabled, so it is not sent (a dodge has no kind of attack, D5).
//   Without this script every field shows, and the server still decides.
// - The kind (basic, power, feint, committed) of the last attack declared from this phone is
//   kept (localStorage, per character) and drawn as the default of the next fresh form: once
//   per form (its id carries the round's state), so a push that redraws the same form keeps
//   what the player picked (static/js/scene.js copies it back).
(function () {
  "use strict";

  const seen = new Set(); // ids of the forms already given their default kind

  function kindKey(form) {
    return "declare-kind:" + form.dataset.declare;
  }

  function remembered(form) {
    try {
      return window.localStorage.getItem(kindKey(form)) || "";
    } catch (error) {
      return ""; // no storage (a private window): the server's default stands
    }
  }

  function needs(form) {
    const action = form.querySelector("select[name=action]");
    const chosen = action && action.selectedOptions[0];
    const out = new Set(((chosen && chosen.dataset.needs) || "").split(" ").filter(Boolean));
    for (const also of form.querySelectorAll("select[name=also]")) {
      if (also.value.startsWith("attack:")) out.add("weapon"); // D14: the split's attack
    }
    return out;
  }

  function show(form) {
    const wanted = needs(form);
    for (const label of form.querySelectorAll("[data-field]")) {
      const on = wanted.has(label.dataset.field);
      label.hidden = !on;
      label.querySelectorAll("select, input").forEach((el) => (el.disabled = !on));
    }
  }

  function startKind(form) {
    if (!form.id || seen.has(form.id)) return;
    seen.add(form.id);
    if (!form.hasAttribute("data-fresh")) return; // a declaration stands: its own kind
    const kind = remembered(form);
    const select = form.querySelector("select[name=maneuver]");
    const option = select && [...select.options].find((o) => o.value === kind);
    if (option && select.selectedIndex === 0) option.defaultSelected = true; // drawn, not typed
  }

  function refresh() {
    document.querySelectorAll("form[data-declare]").forEach((form) => {
      startKind(form);
      show(form);
    });
  }

  document.addEventListener("change", (event) => {
    const form = event.target.closest && event.target.closest("form[data-declare]");
    if (form && event.target.matches("select[name=action], select[name=also]")) show(form);
  });

  document.addEventListener(
    "submit",
    (event) => {
      const form = event.target.closest && event.target.closest("form[data-declare]");
      if (!form || !needs(form).has("maneuver")) return;
      const kind = form.querySelector("select[name=maneuver]");
      try {
        if (kind) window.localStorage.setItem(kindKey(form), kind.value);
      } catch (error) {
        // no storage: nothing remembered
      }
    },
    true
  );

  // After scene.js (loaded before this file) has copied a kept form's choices back.
  document.addEventListener("htmx:afterSwap", refresh);
  document.addEventListener("htmx:oobAfterSwap", refresh);
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", refresh);
  else refresh();
})();
