// The scene screen (the storyteller's tablet and the player's phone): what htmx's websocket
// extension does not do by itself.
//
// - Freshness: #scene-freshness says "live", "reconnecting…" or "offline since 21:04".
// - Sequence: every fragment carries the scene's data-seq. The server sends the whole state on
//   every connect; a push whose seq skips one (and the missing one does not come within a
//   moment: pushes of two server processes may cross) makes the page reconnect, and so get the
//   whole state again. So does coming back online, the page becoming visible again, a wake
//   from sleep (the clock jumped) and a socket the server closed. A fragment older than what
//   the page shows (by data-seq, and for the sheets by data-sheet-seq) is never swapped in,
//   a push's nor a reply's: static/js/crossing.js.
//   Sheet pushes (a cost, a refresh) carry the scene's current seq: they are not scene
//   changes and never look like a gap.
// - Taps made offline: an htmx post that cannot go now is kept (with its idempotency key and
//   the seq it was made on) and sent once when the page is live again; the server counts it
//   once, or refuses it because the scene moved on, and then the sentence is shown.
// - Targets: the start forms' selects of whom to name are filled from the public part's list.
// - Soft timers (data-deadline) count down on the server's clock and say when their time is up.
// - The screen stays on (Wake Lock). When the phone buzzes: static/js/phone.js.
(function () {
  "use strict";

  const GAP_GRACE_MS = 1500; // a missing seq may still come (two processes' pushes crossing)
  const OFFLINE_AFTER_MS = 8000; // reconnecting that long: say since when we are offline
  const WAKE_JUMP_MS = 15000; // the page's timer late by this much: the device slept
  const CLOSED_FOR_GOOD = {
    4001: "logged out",
    4401: "not logged in",
    4403: "not in this scene",
    4404: "no such scene",
  };
  const HTMX_RETRIES = [1006, 1011, 1012, 1013];
  const QUEUE_KEY = "scene-taps";

  let root = null; // the element with ws-connect
  let socket = null; // the WebSocket that last opened
  let wrapper = null; // htmx's socket wrapper (reconnect)
  let dropping = null; // a socket we closed on purpose: its close is no news
  let last = -1; // highest scene seq shown
  let missing = new Set(); // seqs skipped over, waiting for them a moment
  let gapTimer = null;
  let lostAt = null; // when the page stopped being live
  let offlineTimer = null;
  let closedForGood = "";
  let wakeLock = null;

  function badge() {
    return document.getElementById("scene-freshness");
  }

  function hhmm(date) {
    return date.toLocaleTimeString([], { hour: "2-digit", minute: "2-digit", hour12: false });
  }

  function show(state, text) {
    const el = badge();
    if (!el) return;
    el.textContent = text;
    el.dataset.state = state;
    el.classList.toggle("connected", state === "live");
  }

  function markLive() {
    lostAt = null;
    clearTimeout(offlineTimer);
    if (layerAway) show("away", "not live: catching up");
    else show("live", "live");
    flushQueue();
  }

  // -- the server's link to its other processes (the channel layer) ----------------------
  // A server process that loses the channel layer says so on its sockets ("<!--live:away-->")
  // and again when it is back ("<!--live:back-->", then the whole state). Meanwhile it still
  // sends the whole state to a page that fell behind, but changes may take a second or two:
  // the badge says the page is not live.

  let layerAway = false;
  function layerNote(message) {
    const note = /^<!--live:(away|back)-->$/.exec(message || "");
    if (!note) return false;
    layerAway = note[1] === "away";
    if (lostAt === null && !closedForGood) markLive();
    return true;
  }

  function markLost() {
    if (closedForGood) return;
    if (lostAt === null) lostAt = new Date();
    if (!navigator.onLine) {
      show("offline", "offline since " + hhmm(lostAt));
      return;
    }
    show("reconnecting", "reconnecting…");
    clearTimeout(offlineTimer);
    offlineTimer = setTimeout(() => {
      if (lostAt !== null && !closedForGood) show("offline", "offline since " + hhmm(lostAt));
    }, OFFLINE_AFTER_MS);
  }

  // -- sequence numbers -------------------------------------------------------------------

  function seqsIn(html) {
    const found = [];
    const re = /data-seq="(\d+)"/g;
    let m;
    while ((m = re.exec(html || "")) !== null) found.push(parseInt(m[1], 10));
    return found;
  }

  function isWholeState(html) {
    return /id="(scene-board|scene-public)"/.test(html.slice(0, 400));
  }

  function resync(why) {
    if (closedForGood || !wrapper) return;
    clearTimeout(gapTimer);
    missing = new Set();
    markLost();
    if (root) root.dataset.resync = why;
    dropping = socket;
    wrapper.reconnect(); // closes the open socket, opens a new one: the server sends it all
  }

  function noteSeq(html) {
    const seqs = seqsIn(html);
    if (!seqs.length) return;
    const seq = Math.max(...seqs);
    if (isWholeState(html)) {
      last = seq;
      missing = new Set();
      clearTimeout(gapTimer);
      markLive();
      return;
    }
    if (seq <= last) {
      missing.delete(seq);
      return;
    }
    for (let s = last + 1; s < seq && s - last < 1000; s++) missing.add(s);
    missing.delete(seq);
    last = seq;
    if (missing.size && !gapTimer) {
      gapTimer = setTimeout(() => {
        gapTimer = null;
        if (missing.size) resync("gap");
      }, GAP_GRACE_MS);
    }
  }

  // -- the socket -------------------------------------------------------------------------

  document.addEventListener("htmx:wsOpen", (event) => {
    socket = event.detail.event.target;
    wrapper = event.detail.socketWrapper;
    closedForGood = "";
    layerAway = false; // a new socket: its process says so if its layer is away
  });

  document.addEventListener("htmx:wsBeforeMessage", (event) => {
    wrapper = event.detail.socketWrapper || wrapper;
    if (layerNote(event.detail.message)) {
      event.preventDefault(); // a note for the badge, nothing to swap
      return;
    }
    noteSeq(event.detail.message);
  });

  document.addEventListener("htmx:wsAfterMessage", () => {
    if (root) root.dataset.seq = String(last);
    const board = document.getElementById("scene-board");
    if (board && parseInt(board.getAttribute("data-seq"), 10) < last) {
      board.setAttribute("data-seq", String(last));
    }
    afterSwap();
  });

  document.addEventListener("htmx:wsClose", (event) => {
    const closed = event.detail.event;
    if (closed.target && closed.target === dropping) return; // we closed it to resync
    const code = closed.code;
    if (CLOSED_FOR_GOOD[code] || (code >= 4000 && code < 5000)) {
      closedForGood = CLOSED_FOR_GOOD[code] || "closed";
      clearTimeout(offlineTimer);
      show("closed", closedForGood);
      return;
    }
    markLost();
    if (HTMX_RETRIES.indexOf(code) < 0) {
      // htmx retries only the codes above; a clean close (a server going away) is retried here.
      setTimeout(() => resync("closed " + code), 500 + Math.random() * 1500);
    }
  });

  window.addEventListener("offline", () => markLost());
  window.addEventListener("online", () => resync("online"));
  document.addEventListener("visibilitychange", () => {
    if (document.visibilityState === "visible") {
      resync("visible");
      keepAwake();
    }
  });
  window.addEventListener("pageshow", (event) => {
    if (event.persisted) resync("pageshow");
  });

  let tick = Date.now();
  setInterval(() => {
    const now = Date.now();
    if (now - tick > WAKE_JUMP_MS) resync("wake");
    tick = now;
  }, 5000);

  // -- targets: a select with data-targets="<template id>" lists who is here ---------------
  // The list is part of the public fragment (one render for every phone); each phone's own
  // forms take it from there, leaving out the character itself (data-self) and keeping what
  // the player had picked, so a newcomer shows up without re-rendering anyone's private part.

  function fillTargets() {
    document.querySelectorAll("select[data-targets]").forEach((select) => {
      const source = document.getElementById(select.dataset.targets);
      if (!source) return;
      const picked = new Set([...select.selectedOptions].map((o) => o.value));
      const fixed = [...select.options].filter((o) => !o.hasAttribute("data-target"));
      const want = [...source.content.querySelectorAll("option")].filter(
        (o) => o.value !== select.dataset.self
      );
      const now = [...select.options].filter((o) => o.hasAttribute("data-target"));
      const box = select.closest(".cc-mob") || select.closest("label");
      if (select.multiple && box) box.hidden = want.length < 2; // a mob needs two others
      const same =
        now.length === want.length &&
        now.every((o, i) => o.value === want[i].value && o.text === want[i].text);
      if (same) return;
      now.forEach((o) => o.remove());
      want.forEach((o) => {
        const option = new Option(o.text, o.value, false, picked.has(o.value));
        option.setAttribute("data-target", "");
        select.add(option);
      });
      if (!select.multiple && ![...select.options].some((o) => o.selected) && fixed.length) {
        fixed[0].selected = true;
      }
    });
  }

  // -- soft timers: data-deadline="<ISO time>" counts down in its <time class="cc-until">, and
  // turns into data-expired's words when it passes; the words ask the storyteller: nothing is
  // decided for anyone. The count runs on the server's clock: a phone set minutes wrong would
  // otherwise show a timer long over, or one that never ends. The offset is read once from the
  // Date header of a HEAD request for this script (a second's precision: an offset under two
  // seconds is left at 0).

  let skew = 0; // the server's clock minus this device's, in ms
  // Asked of this script's own URL: a static file answers a HEAD cheaply (a page would render).
  const CLOCK_URL = (document.currentScript && document.currentScript.src) || window.location.href;

  async function measureSkew() {
    try {
      const sent = Date.now();
      const reply = await fetch(CLOCK_URL, { method: "HEAD", cache: "no-store" });
      const back = Date.now();
      const server = Date.parse(reply.headers.get("Date") || "");
      if (Number.isNaN(server)) return;
      const offset = server + 500 - (sent + back) / 2; // the header drops the milliseconds
      skew = Math.abs(offset) > 2000 ? offset : 0;
      tickTimers();
    } catch (error) {
      // no answer: the device's own clock will do
    }
  }

  function inWords(ms) {
    const seconds = Math.ceil(ms / 1000);
    if (seconds < 60) return "in " + seconds + " s";
    const rest = seconds % 60;
    return "in " + Math.floor(seconds / 60) + " min" + (rest ? " " + rest + " s" : "");
  }

  function tickTimers() {
    const now = Date.now() + skew;
    document.querySelectorAll("[data-deadline]:not(.expired)").forEach((el) => {
      const left = Date.parse(el.getAttribute("data-deadline")) - now;
      if (Number.isNaN(left)) return;
      if (left <= 0) {
        el.textContent = "⏱ " + el.getAttribute("data-expired");
        el.classList.add("expired");
        return;
      }
      const until = el.querySelector("time.cc-until");
      if (until) until.textContent = inWords(left);
    });
  }

  let ticking = null;
  function armTimers() {
    tickTimers();
    if (!ticking) ticking = setInterval(tickTimers, 1000);
  }

  function afterSwap() {
    fillTargets();
    armTimers();
  }

  document.addEventListener("htmx:afterSettle", afterSwap);
  document.addEventListener("htmx:oobAfterSwap", afterSwap);

  // -- keep awake --------------------------------------------------------------------------

  async function keepAwake() {
    if (document.visibilityState !== "visible") return;
    if (!("wakeLock" in navigator)) return window.keepAwakeFallback?.(); // plain HTTP: awake.js
    if (wakeLock && !wakeLock.released) return;
    try {
      wakeLock = await navigator.wakeLock.request("screen");
    } catch (error) {
      wakeLock = null; // refused (battery saver, no user gesture yet): the screen may sleep
    }
  }

  // -- taps made offline ------------------------------------------------------------------

  function notice(text, kind) {
    let box = document.getElementById("scene-notices");
    if (!box) {
      box = document.createElement("ul");
      box.id = "scene-notices";
      box.className = "messages scene-notices";
      box.setAttribute("role", "status");
      const anchor = badge();
      (anchor ? anchor.parentNode : document.body).insertBefore(
        box,
        anchor ? anchor.nextSibling : null
      );
    }
    const item = document.createElement("li");
    item.className = kind;
    item.textContent = text;
    box.appendChild(item);
    setTimeout(() => item.remove(), kind === "error" ? 20000 : 6000);
  }

  // The keeping of half-made forms (below) tells here what a push swept away.
  document.addEventListener("scene:notice", (event) => notice(event.detail.text, event.detail.kind));

  function loadQueue() {
    try {
      return JSON.parse(sessionStorage.getItem(QUEUE_KEY) || "[]");
    } catch (error) {
      return [];
    }
  }

  function saveQueue(queue) {
    try {
      sessionStorage.setItem(QUEUE_KEY, JSON.stringify(queue));
    } catch (error) {
      /* private mode: the queue lives as long as the page */
    }
  }

  let memoryQueue = loadQueue();

  function labelOf(elt) {
    const form = elt.closest("form") || elt;
    const button = form.querySelector("button");
    return form.dataset.label || (button ? button.textContent.trim() : "your tap");
  }

  function keep(elt, config, text) {
    const body = new URLSearchParams();
    const data = config.formData || new FormData(elt.closest("form") || undefined);
    data.forEach((value, name) => body.append(name, value));
    if (!body.get("key")) return false; // no idempotency key: cannot be sent twice safely
    // What was typed went with the tap: the form drawn afresh (a whole state on reconnect, a
    // push) must not say it was lost ("Not sent") beside "Sent".
    const form = elt.closest && elt.closest("form");
    if (form) form.reset();
    memoryQueue.push({ path: config.path, verb: config.verb, body: body.toString(), label: labelOf(elt) });
    saveQueue(memoryQueue);
    notice(text || "Offline: “" + labelOf(elt) + "” will be sent when the connection is back.", "info");
    return true;
  }

  document.addEventListener("htmx:beforeRequest", (event) => {
    const config = event.detail.requestConfig;
    if (!config || config.verb === "get" || navigator.onLine) return;
    if (keep(event.detail.elt, config)) event.preventDefault();
  });

  // Forms marked data-clear-after empty themselves once their post is taken, unless they were
  // typed into again while it was under way: a push can show the result before the answer
  // comes back, and a storyteller already typing the next NPC keeps what they typed.
  function formValues(form) {
    return new URLSearchParams(new FormData(form)).toString();
  }

  document.addEventListener("htmx:beforeRequest", (event) => {
    const form = event.detail.elt.closest && event.detail.elt.closest("form[data-clear-after]");
    if (form) form.dataset.sent = formValues(form);
  });

  document.addEventListener("htmx:afterRequest", (event) => {
    const form = event.detail.elt.closest && event.detail.elt.closest("form[data-clear-after]");
    if (!form || !event.detail.successful) return;
    if (form.dataset.sent === formValues(form)) form.reset();
    delete form.dataset.sent;
  });

  document.addEventListener("htmx:sendError", (event) => {
    const config = event.detail.requestConfig;
    if (config && config.verb !== "get") keep(event.detail.elt, config);
  });

  function csrfToken() {
    try {
      return JSON.parse(document.body.getAttribute("hx-headers") || "{}")["X-CSRFToken"] || "";
    } catch (error) {
      return "";
    }
  }

  function sentence(html) {
    const doc = new DOMParser().parseFromString(html, "text/html");
    const alert = doc.querySelector("[role=alert]");
    return alert ? alert.textContent.trim() : "";
  }

  let flushing = false;
  async function flushQueue() {
    if (flushing || !memoryQueue.length || !navigator.onLine) return;
    flushing = true;
    try {
      while (memoryQueue.length) {
        const tap = memoryQueue[0];
        let answer;
        try {
          answer = await fetch(tap.path, {
            method: "POST",
            credentials: "same-origin",
            headers: {
              "Content-Type": "application/x-www-form-urlencoded",
              "X-CSRFToken": csrfToken(),
              "HX-Request": "true",
            },
            body: tap.body,
          });
        } catch (error) {
          return; // still offline: the next "live" sends it
        }
        if (answer.status === 503) {
          retryWhenLess(answer.headers.get("Retry-After"));
          return; // still busy: the same tap, with the same key, goes again later
        }
        memoryQueue.shift();
        saveQueue(memoryQueue);
        if (answer.ok) {
          notice("Sent: “" + tap.label + "”.", "success");
        } else {
          const why = sentence(await answer.text()) || "the scene moved on.";
          notice("Not sent: “" + tap.label + "”: " + why, "error");
        }
      }
    } finally {
      flushing = false;
    }
  }

  // -- a busy server: 503 + Retry-After ---------------------------------------------------
  // The server answers 503 when a scene's taps queue longer than it will keep one waiting (or
  // the database is too busy): nothing was written. The tap is kept with its idempotency key,
  // the phone says so, and sends it again after Retry-After (the server counts it once).

  let retryTimer = null;
  function retryWhenLess(header) {
    const seconds = Math.min(30, Math.max(1, parseInt(header || "2", 10) || 2));
    clearTimeout(retryTimer);
    retryTimer = setTimeout(flushQueue, seconds * 1000 + Math.random() * 1000);
  }

  document.addEventListener("htmx:responseError", (event) => {
    const detail = event.detail;
    const config = detail.requestConfig;
    if (!detail.xhr || detail.xhr.status !== 503 || !config || config.verb === "get") return;
    const label = labelOf(detail.elt);
    const text = "The server is busy: “" + label + "” will be sent again in a moment.";
    if (keep(detail.elt, config, text)) retryWhenLess(detail.xhr.getResponseHeader("Retry-After"));
    else notice("The server is busy: “" + label + "” was not sent. Try again in a moment.", "error");
  });

  // -- start --------------------------------------------------------------------------------

  function start() {
    root = document.querySelector("[ws-connect^='/ws/scenes/']");
    const first = root && root.querySelector("[data-seq]");
    if (first) last = parseInt(first.getAttribute("data-seq"), 10);
    afterSwap();
    measureSkew();
    keepAwake();
    document.addEventListener("click", keepAwake, { once: true }); // some browsers want a tap
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();

// Half-filled forms survive a push (and a folded <details> keeps its state). A form is known
// by the state it was drawn for: its id when marked data-keep (a round's state token in it, say),
// else its idempotency key (the hidden "key" input, made of the challenge, its step, the side and
// the move). When a swap brings a form known the same way, the new form gets what was picked or
// typed in the old one, so a push that leaves that state as it is (the clock, a pause, someone
// joining, the other side's move) never wipes a player's half-made choice nor folds away what
// they opened; a new state brings a new key, and a fresh form. Values are copied, not elements
// moved: htmx's hx-preserve can lose the element when a reply and a push of the same state cross.
(function () {
  "use strict";

  function fieldsOf(form) {
    return Array.from(form.elements).filter(
      (el) => el.name && el.type !== "hidden" && el.type !== "submit" && el.type !== "button"
    );
  }

  function valueOf(el) {
    if (el.type === "checkbox" || el.type === "radio") return el.checked;
    if (el.type === "select-multiple") return [...el.selectedOptions].map((o) => o.value);
    return el.value;
  }

  function idempotencyKey(form) {
    const key = form.querySelector("input[type=hidden][name=key]");
    return key && key.value ? key.value : "";
  }

  // "#id" for a marked element, "k:<key>" for a form by its key, "" when it cannot be known.
  function nameOf(el) {
    if (el.hasAttribute("data-keep") && el.id) return "#" + el.id;
    if (el.tagName === "FORM") {
      const key = idempotencyKey(el);
      return key ? "k:" + key : "";
    }
    const inner = el.querySelector("form");
    const key = inner ? nameOf(inner) : "";
    return key ? "in:" + key : "";
  }

  function find(name) {
    if (name.startsWith("#")) return document.getElementById(name.slice(1));
    if (name.startsWith("in:")) {
      const form = find(name.slice(3));
      return form ? form.closest("details") : null;
    }
    const value = name.slice(2);
    for (const input of document.querySelectorAll("input[type=hidden][name=key]")) {
      if (input.value === value && input.form) return input.form;
    }
    return null;
  }

  // The field being typed in, if a push replaces its form: the new form's field takes the focus
  // (and the selection) back, so the next keystroke lands where the person was typing.
  function focusOf(saved) {
    const el = document.activeElement;
    const form = el && el.form;
    const name = form ? nameOf(form) : "";
    if (!name || !saved.has(name)) return null;
    let range = null;
    try {
      range = [el.selectionStart, el.selectionEnd, el.selectionDirection];
    } catch (error) {
      range = null; // a number input has no selection to ask for
    }
    return { name, index: fieldsOf(form).indexOf(el), range };
  }

  function refocus(focus) {
    const form = focus && find(focus.name);
    if (!form || form.tagName !== "FORM") return;
    const active = document.activeElement;
    if (active && active !== document.body && active.isConnected) return; // focus went elsewhere
    const el = fieldsOf(form)[focus.index];
    if (!el) return;
    el.focus({ preventScroll: true });
    if (focus.range && focus.range[0] !== null) {
      try {
        el.setSelectionRange(...focus.range);
      } catch (error) {
        // not a text field any more: focus alone will do
      }
    }
  }

  function typedIn(el) {
    if (el.type === "checkbox" || el.type === "radio") return el.checked !== el.defaultChecked;
    if (el.type === "select-one") {
      // none marked selected: the first option is the one drawn, not a choice made
      const drawn = Math.max(0, [...el.options].findIndex((o) => o.defaultSelected));
      return el.options.length > 0 && el.selectedIndex !== drawn;
    }
    if (el.type === "select-multiple") {
      return [...el.options].some((o) => o.selected !== o.defaultSelected);
    }
    return el.value !== el.defaultValue;
  }

  // What a person would call the form: its data-label, else its first typed field's label.
  function titleOf(form, fields) {
    if (form.dataset.label) return form.dataset.label;
    const el = fields.find(typedIn) || fields[0];
    const label = el.getAttribute("aria-label") || (el.labels[0] && el.labels[0].textContent);
    return (label || el.name).trim().replace(/\s+/g, " ");
  }

  // A refusal's sentence (a reply's .flash[role=alert]) stays through a push of the same state:
  // a push sent before the refusal can land after its reply, with the same data-seq, and wipe
  // the sentence. A push of a newer state drops it: the sentence was about the old one.
  function flashesNow() {
    return [...document.querySelectorAll(".flash[role=alert]")]
      .map((el) => {
        const holder = el.parentElement;
        const region = el.closest("[data-seq]");
        if (!holder || !holder.id || !region || !region.id) return null;
        const seq = region.getAttribute("data-seq");
        const at = [...holder.children].indexOf(el);
        return { el, holder: holder.id, region: region.id, seq, at };
      })
      .filter(Boolean);
  }

  function keepFlashes(flashes) {
    (flashes || []).forEach((f) => {
      if (f.el.isConnected) return;
      const region = document.getElementById(f.region);
      const holder = document.getElementById(f.holder);
      if (!region || !holder || region.getAttribute("data-seq") !== f.seq) return;
      if (holder.querySelector(".flash[role=alert]")) return; // a sentence of its own
      holder.insertBefore(f.el, holder.children[f.at] || null);
    });
  }

  function sending(form) {
    return form.classList.contains("htmx-request") || !!form.querySelector(".htmx-request");
  }

  // What went with a form's post (data-went): a push can draw the form afresh while its post
  // is under way (the copy gets the values, not the request), or a late answer of an earlier
  // tap can; those values are on their way, and the form that then goes is not "not sent".
  function went(form) {
    return form.dataset.went === JSON.stringify(fieldsOf(form).map(valueOf));
  }
  document.addEventListener("htmx:beforeRequest", (event) => {
    const form = event.detail.elt && event.detail.elt.closest && event.detail.elt.closest("form");
    if (form) form.dataset.went = JSON.stringify(fieldsOf(form).map(valueOf));
  });
  document.addEventListener("htmx:afterRequest", (event) => {
    if (event.detail.successful) return; // refused or lost: what it carried did not go
    const form = event.detail.elt && event.detail.elt.closest && event.detail.elt.closest("form");
    const name = form ? nameOf(form) : "";
    [form, name ? find(name) : null].forEach((f) => f && delete f.dataset.went);
  });

  function snapshot() {
    const saved = new Map();
    document.querySelectorAll("form").forEach((form) => {
      const name = nameOf(form);
      const fields = fieldsOf(form);
      if (!name || !fields.length || saved.has(name)) return;
      saved.set(name, {
        node: form,
        fields: fields.map((el) => [el.name, valueOf(el)]),
        // a form whose post is under way is not lost: its answer (or its push) comes next
        typed: fields.some(typedIn) && !sending(form) && !went(form) ? titleOf(form, fields) : "",
        went: form.dataset.went,
      });
    });
    // A <details> (a form folded away) stays open or shut as the person left it.
    document.querySelectorAll("details").forEach((box) => {
      const name = nameOf(box);
      if (name && !saved.has(name)) saved.set(name, { node: box, open: box.open });
    });
    return saved;
  }

  // A form typed into that a push took away (its step is over: someone else answered, the round
  // moved on) is said once, so nobody taps the next form believing their digits went.
  function sweptAway(saved) {
    const lost = [];
    saved.forEach((old, name) => {
      if (old.typed && !old.node.isConnected && !find(name)) lost.push(old.typed);
      old.typed = "";
    });
    if (!lost.length) return;
    const text = "Not sent, the scene moved on: what you typed in “" + lost.join("”, “") + "”.";
    document.dispatchEvent(new CustomEvent("scene:notice", { detail: { text, kind: "info" } }));
  }

  function restore(saved) {
    const focus = saved.focus;
    saved.forEach((old, name) => {
      const now = find(name);
      if (!now || now === old.node) return;
      if (now.tagName === "DETAILS" && "open" in old) {
        now.open = old.open;
        return;
      }
      if (now.tagName !== "FORM" || !old.fields) return;
      const fields = fieldsOf(now);
      if (old.went) now.dataset.went = old.went;
      old.fields.forEach(([name, value], i) => {
        const el = fields[i];
        if (!el || el.name !== name) return;
        if (typeof value === "boolean") el.checked = value;
        else if (Array.isArray(value)) {
          [...el.options].forEach((o) => (o.selected = value.includes(o.value)));
        } else el.value = value;
      });
    });
    refocus(focus);
    sweptAway(saved);
    keepFlashes(saved.flashes);
  }

  // The form whose post the server just took: its reply draws it afresh (a sent "why" is not
  // typed again), even when the state, and so its key, stayed the same.
  let sent = "";
  let saved = null;
  function before() {
    saved = snapshot();
    if (sent) saved.delete(sent);
    saved.focus = focusOf(saved);
    saved.flashes = sent ? [] : flashesNow(); // a reply brings its own sentence, or none
  }
  function after() {
    if (saved) restore(saved);
  }
  document.addEventListener("htmx:beforeSwap", (event) => {
    const detail = event.detail;
    const elt = (detail.requestConfig && detail.requestConfig.elt) || detail.elt;
    const form = elt && elt.closest ? elt.closest("form") : null;
    sent = form && detail.xhr && detail.xhr.status < 400 ? nameOf(form) : "";
    before();
  });
  document.addEventListener("htmx:oobBeforeSwap", before);
  document.addEventListener("htmx:afterSwap", () => {
    after();
    sent = "";
  });
  // A reply not swapped in (older than what is shown: crossing.js) leaves no form "just sent".
  document.addEventListener("htmx:afterOnLoad", () => {
    sent = "";
  });
  document.addEventListener("htmx:oobAfterSwap", after);
})();
