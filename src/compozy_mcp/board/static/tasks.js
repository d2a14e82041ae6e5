// Tasks by state, as the daemon renders them (escaped); a delivery in review is accepted or
// sent back with comments by a POST to the HTTP API with the tab's token.
"use strict";

(function () {
  const c = window.compozy;
  const main = document.getElementById("tasks");

  async function draw() {
    const nodes = await c.fragment("/board/tasks");
    if (nodes !== null) c.draw(main, nodes);
  }

  main.addEventListener("click", async (event) => {
    const button = event.target.closest("button.task-review");
    if (!button) return;
    const task = button.dataset.task;
    const body = { decision: button.dataset.decision };
    if (body.decision === "request_changes") {
      const input = main.querySelector('input.task-comments[data-task="' + CSS.escape(task) + '"]');
      body.comments = input ? input.value : "";
      if (!body.comments) {
        document.getElementById("status").textContent = "say what to change";
        if (input) input.focus();
        return;
      }
    }
    await c.post("/api/tasks/" + encodeURIComponent(task) + "/review", body, "review");
    draw();
  });
  document.getElementById("refresh").addEventListener("click", draw);
  c.begin(draw);
})();
