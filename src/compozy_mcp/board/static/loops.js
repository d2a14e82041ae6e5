// Loop runs: their nodes, outputs and errors as the daemon renders them (escaped); a waiting
// gate is answered by a POST to the HTTP API, as `compozy loop approve` does: the decision,
// a pass or fail for each criterion the operator marked, and the note.
"use strict";

(function () {
  const c = window.compozy;
  const main = document.getElementById("loops");

  // a run still queued or running is looked at again soon: a Loop run sends the board no
  // event, and one that reaches its gate after the page was drawn must show the gate
  const MOVING = 'section.run[data-status="queued"], section.run[data-status="running"]';
  // what the operator has started to answer at a waiting gate (a redraw must not erase it)
  const ANSWERING = ".gate input.criterion-answer, .gate input.gate-note";
  let again = null;

  function answering() {
    return Array.from(main.querySelectorAll(ANSWERING)).map((input) => [
      input.id,
      input.checked,
      input.value,
    ]);
  }

  function restore(kept) {
    for (const [id, checked, value] of kept) {
      const input = document.getElementById(id);
      if (!input || !input.matches(ANSWERING)) continue;
      if (input.type === "radio") input.checked = checked;
      else input.value = value;
    }
  }

  async function draw() {
    clearTimeout(again);
    const nodes = await c.fragment("/board/loops");
    if (nodes !== null) {
      const kept = answering();
      c.draw(main, nodes);
      restore(kept);
    }
    if (main.querySelector(MOVING)) again = setTimeout(draw, 1000);
  }

  // the answer a gate's controls give: the criteria marked pass or fail (one left unmarked
  // follows the decision, as with the CLI) and the note when one is written
  function answer(gate, button) {
    const body = { decision: button.dataset.decision, node_id: button.dataset.node, wait: true };
    const answers = [];
    for (const criterion of gate.querySelectorAll("li.criterion")) {
      const marked = criterion.querySelector("input.criterion-answer:checked");
      if (!marked) continue;
      answers.push({ criterion_id: criterion.dataset.criterion, passed: marked.value === "pass" });
    }
    if (answers.length) body.answers = answers;
    const note = gate.querySelector("input.gate-note");
    if (note && note.value.trim()) body.note = note.value.trim();
    return body;
  }

  main.addEventListener("click", async (event) => {
    const button = event.target.closest("button.gate-answer");
    if (!button) return;
    const url = "/api/loop-runs/" + encodeURIComponent(button.dataset.run) + "/approve";
    await c.post(url, answer(button.closest(".gate"), button), button.dataset.decision);
    draw();
  });
  document.getElementById("refresh").addEventListener("click", draw);
  c.begin(draw);
})();
