// Loop runs: their nodes, outputs and errors as the daemon renders them (escaped); a waiting
// gate is answered by a POST to the HTTP API.
"use strict";

(function () {
  const c = window.compozy;
  const main = document.getElementById("loops");

  // a run still queued or running is looked at again soon: a Loop run sends the board no
  // event, and one that reaches its gate after the page was drawn must show the gate
  const MOVING = 'section.run[data-status="queued"], section.run[data-status="running"]';
  let again = null;

  async function draw() {
    clearTimeout(again);
    const nodes = await c.fragment("/board/loops");
    if (nodes !== null) c.draw(main, nodes);
    if (main.querySelector(MOVING)) again = setTimeout(draw, 1000);
  }

  main.addEventListener("click", async (event) => {
    const button = event.target.closest("button.gate-answer");
    if (!button) return;
    const url = "/api/loop-runs/" + encodeURIComponent(button.dataset.run) + "/approve";
    const body = { decision: button.dataset.decision, node_id: button.dataset.node, wait: true };
    await c.post(url, body, button.dataset.decision);
    draw();
  });
  document.getElementById("refresh").addEventListener("click", draw);
  c.begin(draw);
})();
