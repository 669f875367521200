// The console's keyboard shortcuts and local times (no inline script: strict CSP).
// j/k move through the queue or between flags, c/x pick a decision and put the cursor
// in the note, n the note, Ctrl+Enter records, ? shows the keys.
(function () {
  "use strict";

  // times: the server writes UTC; people read their own clock, the full time on hover
  var times = document.querySelectorAll("time[data-local]");
  for (var i = 0; i < times.length; i++) {
    var t = times[i], when = new Date(t.getAttribute("datetime"));
    if (isNaN(when)) { continue; }
    t.title = when.toString();
    t.textContent = when.toLocaleString([], {year: "numeric", month: "short",
      day: "numeric", hour: "2-digit", minute: "2-digit"});
  }

  var help = document.getElementById("keys");
  var cards = Array.prototype.slice.call(document.querySelectorAll(".flagcard .flaglink"));
  var selected = -1;

  function typing(el) {
    var tag = el && el.tagName;
    return tag === "INPUT" || tag === "TEXTAREA" || tag === "SELECT";
  }
  function go(id) {
    var a = document.getElementById(id);
    if (a) { window.location.href = a.href; }
  }
  function decide(value) {
    var radio = document.getElementById("d-" + value);
    var note = document.getElementById("note");
    if (!radio || !note) { return; }
    radio.checked = true;
    radio.dispatchEvent(new Event("change", {bubbles: true}));
    note.focus();
  }
  function move(by) {
    if (!cards.length) { return false; }
    selected = Math.max(0, Math.min(cards.length - 1, selected + by));
    cards[selected].focus();
    return true;
  }

  // confirming cheating needs a note: the form says so before the server does
  var form = document.querySelector("form.review, form#bulk");
  if (form) {
    form.addEventListener("change", function () {
      var confirm = form.querySelector("input[name=state][value=confirmed]");
      var note = form.querySelector("textarea[name=note]");
      if (confirm && note) { note.required = confirm.checked; }
    });
  }

  document.addEventListener("keydown", function (e) {
    if (e.ctrlKey && e.key === "Enter" && typing(e.target) && e.target.form) {
      e.preventDefault();
      e.target.form.requestSubmit();
      return;
    }
    if (e.key === "Escape") {
      if (help) { help.hidden = true; }
      if (typing(e.target)) { e.target.blur(); }
      return;
    }
    if (typing(e.target) || e.ctrlKey || e.metaKey || e.altKey) { return; }
    var handled = true;
    switch (e.key) {
      case "j": if (!move(1)) { go("next-flag"); } break;
      case "k": if (!move(-1)) { go("prev-flag"); } break;
      case "c": decide("cleared"); break;
      case "x": decide("confirmed"); break;
      case "n": var note = document.getElementById("note"); if (note) { note.focus(); } break;
      case "?": if (help) { help.hidden = !help.hidden; if (!help.hidden) { help.scrollIntoView(); } } break;
      default: handled = false;
    }
    if (handled) { e.preventDefault(); }
  });
})();
