// partnersim QA console: live regions. An element with data-live="URL" is refreshed from URL
// every data-every milliseconds (the server renders the fragment); the cadence line above it
// shows when it last changed hands. Open <details> stay open across refreshes. No framework,
// no request beyond the sandbox itself.
(function () {
  "use strict";
  function refresh(el, stamp) {
    if (document.hidden) return;
    var open = Array.prototype.map.call(el.querySelectorAll("details[open]"), function (d) { return d.id; });
    fetch(el.dataset.live, { credentials: "same-origin", headers: { Accept: "text/html" } }).then(function (r) {
      if (r.status === 401) { location.reload(); return null; }
      if (!r.ok) throw new Error("HTTP " + r.status);
      return r.text();
    }).then(function (html) {
      if (html === null) return;
      el.innerHTML = html;
      open.forEach(function (id) { var d = id && document.getElementById(id); if (d) d.open = true; });
      if (stamp) stamp.textContent = "updated " + new Date().toLocaleTimeString();
    }).catch(function (e) {
      if (stamp) stamp.textContent = "update failed (" + e.message + "), retrying";
    });
  }
  document.querySelectorAll("[data-live]").forEach(function (el) {
    var every = parseInt(el.dataset.every, 10) || 2000;
    var cadence = el.previousElementSibling;
    var stamp = cadence && cadence.querySelector("[data-stamp]");
    if (stamp) stamp.textContent = "loaded " + new Date().toLocaleTimeString();
    setInterval(function () { refresh(el, stamp); }, every);
  });
})();
