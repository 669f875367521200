// Steps through a solve's moves on the flag page. The moves come from the page's
// JSON data block (no inline script: the console runs under a strict CSP).
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
  var playBtn = document.getElementById("rp-play");
  var cells = [], timer = null, at = 0;
  var DIGITS = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ";
  function sym(v) { return d.values ? d.values[v] : DIGITS[v]; }

  boardEl.style.gridTemplateColumns = "repeat(" + cols + ", 1fr)";
  for (var c = 0; c < rows * cols; c++) {
    var el = document.createElement("div");
    var r = Math.floor(c / cols), k = c % cols;
    el.setAttribute("role", "gridcell");
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

  function show(n) {
    at = Math.max(0, Math.min(moves.length, n));
    var grid = d.givens.slice();
    for (var i = 0; i < at; i++) {
      var m = moves[i];
      if (!m[3]) { grid[m[1]] = m[2]; }  // placements; pencil marks leave the cell
    }
    for (var c = 0; c < cells.length; c++) {
      if (d.givens[c]) { continue; }
      cells[c].textContent = grid[c] ? sym(grid[c]) : "";
      cells[c].classList.remove("last");
    }
    step.value = String(at);
    if (at === 0) {
      status.textContent = "Start: " + moves.length + " moves to replay.";
      return;
    }
    var last = moves[at - 1];
    cells[last[1]].classList.add("last");
    var rc = "r" + (Math.floor(last[1] / cols) + 1) + "c" + (last[1] % cols + 1);
    status.textContent = "Move " + at + " of " + moves.length + " at " + clock(last[0]) +
      ": " + rc + (last[3] ? " pencil mark " : " ← ") + (last[2] ? sym(last[2]) : "erased");
  }

  function stop() {
    if (timer) { clearInterval(timer); timer = null; }
    playBtn.textContent = "Play";
    playBtn.setAttribute("aria-label", "Play");
  }

  document.getElementById("rp-first").addEventListener("click", function () { stop(); show(0); });
  document.getElementById("rp-back").addEventListener("click", function () { stop(); show(at - 1); });
  document.getElementById("rp-next").addEventListener("click", function () { stop(); show(at + 1); });
  document.getElementById("rp-last").addEventListener("click", function () { stop(); show(moves.length); });
  step.addEventListener("input", function () { stop(); show(parseInt(step.value, 10)); });
  playBtn.addEventListener("click", function () {
    if (timer) { stop(); return; }
    if (at >= moves.length) { show(0); }
    playBtn.textContent = "Pause";
    playBtn.setAttribute("aria-label", "Pause");
    timer = setInterval(function () {
      if (at >= moves.length) { stop(); return; }
      show(at + 1);
    }, 250);
  });
  show(moves.length);
})();
