// partnersim QA console: live regions. An element with data-live="URL" is refetched from URL
// every data-every milliseconds (the server renders the fragment). The region is replaced only
// when the fragment differs from what is shown, so a refresh that brings nothing new leaves
// the nodes alone: a text selection, focus, hover or a click in progress survives it. The
// cadence line above the region says when it last changed hands and when it last checked:
// "updated 14:03:07Z" after a change, "updated 14:03:07Z (checked 14:03:15Z, no change)"
// (or "loaded …") while nothing changes, so a QA person sees both that it is live and how
// old the rows are. Each completed fetch counts in the region's data-refreshes. Open
// <details> stay open across changes. Buttons with data-copy copy their text. No framework,
// no request beyond the sandbox itself.
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
  // refresh refetches a live region. The fetched html is parsed into a <template> with the
  // region's open <details> opened in it too, so both sides are serialized by the browser the
  // same way and an open delivery is no difference; only a difference is swapped in.
  function refresh(el, live) {
    if (document.hidden) return;
    fetch(el.dataset.live, { credentials: "same-origin", headers: { Accept: "text/html" } }).then(function (r) {
      if (r.status === 401) { location.reload(); return null; }
      if (!r.ok) throw new Error("HTTP " + r.status);
      return r.text();
    }).then(function (html) {
      if (html === null) return;
      var tpl = document.createElement("template");
      tpl.innerHTML = html.trim();
      el.querySelectorAll("details[open]").forEach(function (d) {
        var same = d.id && tpl.content.getElementById(d.id);
        if (same) same.open = true;
      });
      if (tpl.innerHTML === el.innerHTML.trim()) {
        live.show(live.changed + " (checked " + utcNow() + ", no change)");
      } else {
        el.replaceChildren(tpl.content);
        live.changed = "updated " + utcNow();
        live.show(live.changed);
      }
      el.dataset.refreshes = String((Number(el.dataset.refreshes) || 0) + 1);
    }).catch(function (e) {
      live.show("update failed (" + e.message + "), retrying");
    });
  }
  document.querySelectorAll("[data-live]").forEach(function (el) {
    var every = parseInt(el.dataset.every, 10) || 2000;
    var cadence = el.previousElementSibling;
    var stamp = cadence && cadence.querySelector("[data-stamp]");
    // changed is what the stamp says of the last change: the page's load, then each swap.
    var live = { changed: "loaded " + utcNow(), show: function (text) { if (stamp) stamp.textContent = text; } };
    live.show(live.changed);
    setInterval(function () { refresh(el, live); }, every);
  });
})();
