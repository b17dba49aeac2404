// The screen stays on where browsers give no Wake Lock API: the venue's wifi serves plain HTTP,
// which is not a secure context, so navigator.wakeLock is missing there. nosleep.js (pinned from
// npm) then plays a tiny silent video in a loop. Browsers start it only from a tap: scene.js
// calls keepAwakeFallback on load, on becoming visible and on the first tap; until one of those
// plays it, every tap tries again. <html data-awake="nosleep"> says it runs.
(function () {
  "use strict";

  let noSleep = null;

  function running() {
    return Boolean(noSleep && noSleep.isEnabled && !(noSleep.noSleepVideo && noSleep.noSleepVideo.paused));
  }

  window.keepAwakeFallback = function () {
    if (typeof window.NoSleep !== "function" || running()) return;
    noSleep = noSleep || new window.NoSleep();
    noSleep.enable().then(
      () => {
        document.documentElement.dataset.awake = "nosleep";
      },
      () => {
        delete document.documentElement.dataset.awake; // not from a tap yet: the next tap tries
      },
    );
  };

  document.addEventListener("click", () => {
    if (!("wakeLock" in navigator) && noSleep && !running()) window.keepAwakeFallback();
  });
})();
