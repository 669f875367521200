// Steps through a solve's moves on the flag and solve pages. The moves come from the
// page's JSON data block (no inline script: the console runs under a strict CSP).
// Each move is [t_ms, cell, value, is_note, marks, what the evidence found]; marks name
// what the evidence says of it (unforced, unproven, pace, wrong, erase, note).
(function () {
  "use strict";
  var root = document.getElementById("replay");
  var data = document.getElementById("replay-data");
  if (!root || !data) { return; }
  var d = JSON.parse(data.textContent);
  // box_size: the side of a Sudoku block (0: no blocks); values: how a type shows a
  // move's value
  var box = d.box_size, rows = d.rows, cols = d.cols, moves = d.moves;
  var boardEl = document.getElementById("replay-board");
  var step = document.getElementById("rp-step");
  var status = document.getElementById("rp-status");
  var found = document.getElementById("rp-found");
  var playBtn = document.getElementById("rp-play");
  var speed = document.getElementById("rp-speed");
  var cells = [], timer = null, at = 0;
  var DIGITS = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ";
  var EVIDENCE = ["unforced", "unproven", "pace", "wrong", "erase"];
  function sym(v) { return d.values ? d.values[v] : DIGITS[v]; }

  // rows as well as columns: a row without digits keeps its height, so cells stay
  // square and the board keeps its shape as moves play
  boardEl.style.gridTemplateColumns = "repeat(" + cols + ", minmax(0, 1fr))";
  boardEl.style.gridTemplateRows = "repeat(" + rows + ", minmax(0, 1fr))";
  boardEl.style.aspectRatio = cols + " / " + rows;
  for (var c = 0; c < rows * cols; c++) {
    var el = document.createElement("div");
    var r = Math.floor(c / cols), k = c % cols;
    // named for a screen reader; the board is a group of cells, not an interactive grid
    el.setAttribute("aria-label", "row " + (r + 1) + ", column " + (k + 1));
    if (box && k % box === 0 && k) { el.classList.add("bl"); }
    if (box && r % box === 0 && r) { el.classList.add("bt"); }
    if (d.givens[c]) {  // a Sudoku given, a Nurikabe clue: both as numbers
      el.classList.add("given");
      el.textContent = d.values ? String(d.givens[c]) : DIGITS[d.givens[c]];
    }
    boardEl.appendChild(el);
    cells.push(el);
  }
  step.max = String(moves.length);

  function clock(ms) {
    var s = Math.round(ms / 1000);
    return Math.floor(s / 60) + ":" + ("0" + (s % 60)).slice(-2);
  }
  function evidenceOf(m) {
    return m[4].filter(function (k) { return EVIDENCE.indexOf(k) >= 0; });
  }

  function show(n) {
    at = Math.max(0, Math.min(moves.length, n));
    var grid = d.givens.slice(), notes = {}, i, c;
    for (i = 0; i < at; i++) {
      var m = moves[i];
      if (m[3]) {  // a note toggles a candidate; a note of 0 clears the cell's notes
        var set = notes[m[1]] || (notes[m[1]] = {});
        if (!m[2]) { notes[m[1]] = {}; } else if (set[m[2]]) { delete set[m[2]]; } else { set[m[2]] = true; }
      } else {
        grid[m[1]] = m[2];
      }
    }
    for (c = 0; c < cells.length; c++) {
      if (d.givens[c]) { continue; }
      var el = cells[c];
      el.className = el.className.replace(/\b(last|notes|mark-\w+)\b/g, "").trim();
      if (grid[c]) {
        el.textContent = sym(grid[c]);
      } else {
        var marks = Object.keys(notes[c] || {}).sort();
        el.textContent = marks.map(function (v) { return sym(+v); }).join("");
        if (marks.length) { el.classList.add("notes"); }
      }
    }
    step.value = String(at);
    found.textContent = "";
    if (at === 0) {
      status.textContent = "Start: " + moves.length + " moves to replay.";
      return;
    }
    var last = moves[at - 1];
    var cell = cells[last[1]];
    cell.classList.add("last");
    last[4].forEach(function (k) { cell.classList.add("mark-" + k); });
    var rc = "r" + (Math.floor(last[1] / cols) + 1) + "c" + (last[1] % cols + 1);
    var words = last[4].map(function (k) { return d.words[k]; });
    status.textContent = "Move " + at + " of " + moves.length + " at " + clock(last[0]) +
      ": " + rc + (last[3] ? " note " : " ← ") + (last[2] ? sym(last[2]) : "erased") +
      (words.length ? " (" + words.join("; ") + ")" : "");
    if (last[5] || last[4].indexOf("unproven") >= 0) {
      found.textContent = "What the deduction ladder found at this placement: " +
        (last[5] || "nothing proved it") + ".";
    }
  }

  function stop() {
    if (timer) { clearTimeout(timer); timer = null; }
    playBtn.textContent = "Play";
    playBtn.setAttribute("aria-label", "Play");
    status.setAttribute("aria-live", "polite");  // the move it stopped at is read out
  }
  function delay() {  // fixed step, or the solve's own time between moves
    if (speed.value === "step" || at === 0 || at >= moves.length) { return 250; }
    return Math.min(30000, Math.max(0, moves[at][0] - moves[at - 1][0]) / +speed.value);
  }
  function tick() {
    if (at >= moves.length) { stop(); return; }
    show(at + 1);
    timer = setTimeout(tick, delay());
  }
  function nextMark() {
    for (var i = at; i < moves.length; i++) {
      if (evidenceOf(moves[i]).length) { show(i + 1); return; }
    }
    status.textContent = "No marked move after move " + at + ".";
  }

  document.getElementById("rp-first").addEventListener("click", function () { stop(); show(0); });
  document.getElementById("rp-back").addEventListener("click", function () { stop(); show(at - 1); });
  document.getElementById("rp-next").addEventListener("click", function () { stop(); show(at + 1); });
  document.getElementById("rp-last").addEventListener("click", function () { stop(); show(moves.length); });
  document.getElementById("rp-mark").addEventListener("click", function () { stop(); nextMark(); });
  step.addEventListener("input", function () { stop(); show(parseInt(step.value, 10)); });
  playBtn.addEventListener("click", function () {
    if (timer) { stop(); return; }
    if (at >= moves.length) { show(0); }
    playBtn.textContent = "Pause";
    playBtn.setAttribute("aria-label", "Pause");
    status.setAttribute("aria-live", "off");  // not four moves a second read out
    timer = setTimeout(tick, delay());
  });
  show(moves.length);
})();
