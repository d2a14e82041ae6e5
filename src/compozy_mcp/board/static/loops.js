// Loop runs: their nodes, outputs and errors as the daemon renders them (escaped); a waiting
// gate is answered by a POST to the HTTP API.
"use strict";

(function () {
  const c = window.compozy;
  const main = document.getElementById("loops");

  async function draw() {
    const nodes = await c.fragment("/board/loops");
    if (nodes !== null) c.draw(main, nodes);
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
