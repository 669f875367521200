// The demo site's page: the recorder attached to the grid, a digit pad for the pointer,
// and the solve handed to the site's own server (which signs it; this page holds no secret).
import { Recorder } from "/static/recorder.js";

const game = document.getElementById("game");
const inputs = Array.from(document.querySelectorAll("#grid .cell"));
const puzzle = game.dataset.puzzle, player = game.dataset.player;
const recorder = new Recorder({ key: `${puzzle}:${player}`, cells: inputs.length }).attach(inputs);
const status = document.getElementById("status");
let selected = inputs.find((input) => !input.readOnly);

inputs.forEach((input) => input.addEventListener("focus", () => { selected = input; }));

document.querySelectorAll(".pad .digit").forEach((button) => {
  // keep the cell's focus: the pad writes into the cell last picked
  button.addEventListener("mousedown", (event) => event.preventDefault());
  button.addEventListener("click", () => {
    if (!selected || selected.readOnly) return;
    const digit = button.dataset.digit;
    selected.value = digit === "0" ? "" : digit;
    selected.dispatchEvent(new Event("input", { bubbles: true }));
    selected.focus();
  });
});

const submit = document.getElementById("submit");
submit.addEventListener("click", async () => {
  // one solve, one submission: the button waits for the answer (the server also makes
  // the same id for the same solve, so a second send is stored once)
  submit.disabled = true;
  status.textContent = "sending…";
  try {
    const resp = await fetch("/solves", {
      method: "POST", headers: { "content-type": "application/json" },
      body: JSON.stringify({ puzzle_id: puzzle, player, log: recorder.log() }),
    });
    const answer = await resp.json();
    if (!resp.ok) {
      status.textContent = `refused: ${answer.error}`;
      return;
    }
    recorder.clear();
    window.location.assign(answer.verdict);
  } catch {
    status.textContent = "not sent: the site did not answer; try again";
  } finally {
    submit.disabled = false;
  }
});
