// partnersim QA console: live regions. An element with data-live="URL" is refreshed from URL
// every data-every milliseconds (the server renders the fragment); the cadence line above it
// shows when it last changed hands. Open <details> stay open across refreshes. Buttons with
// data-copy copy their text. No framework, no request beyond the sandbox itself.
(function () {
  "use strict";
  // utcNow is the time as the console shows every time: UTC, to the second.
  function utcNow() {
    return new Date().toISOString().slice(11, 19) + "Z";
  }
  // A button with data-copy puts that text on the clipboard (the delivery log's bodies and
  // signatures); one listener serves the rows live updates replace.
  document.addEventListener("click", function (ev) {
    var btn = ev.target.closest && ev.target.closest("button[data-copy]");
    if (!btn) return;
    var label = btn.textContent;
    var done = function (ok) {
      btn.textContent = ok ? "Copied" : "Copy failed";
      setTimeout(function () { btn.textContent = label; }, 1500);
    };
    if (navigator.clipboard && window.isSecureContext) {
      navigator.clipboard.writeText(btn.dataset.copy).then(function () { done(true); }, function () { done(false); });
      return;
    }
    var area = document.createElement("textarea");
    area.value = btn.dataset.copy;
    document.body.appendChild(area);
    area.select();
    var ok = false;
    try { ok = document.execCommand("copy"); } catch (e) { ok = false; }
    document.body.removeChild(area);
    done(ok);
  });
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
      if (stamp) stamp.textContent = "updated " + utcNow();
    }).catch(function (e) {
      if (stamp) stamp.textContent = "update failed (" + e.message + "), retrying";
    });
  }
  document.querySelectorAll("[data-live]").forEach(function (el) {
    var every = parseInt(el.dataset.every, 10) || 2000;
    var cadence = el.previousElementSibling;
    var stamp = cadence && cadence.querySelector("[data-stamp]");
    if (stamp) stamp.textContent = "loaded " + utcNow();
    setInterval(function () { refresh(el, stamp); }, every);
  });
})();
