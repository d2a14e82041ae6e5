// Remembered approvals (grants), as `compozy approvals list --full` shows them, each with
// Revoke: the tool `compozy approvals revoke` calls (compozy__tool_approvals_revoke).
"use strict";

(function () {
  const c = window.compozy;
  const main = document.getElementById("approvals");

  async function draw() {
    const nodes = await c.fragment("/board/approvals");
    if (nodes !== null) c.draw(main, nodes);
  }

  main.addEventListener("click", async (event) => {
    const button = event.target.closest("button.revoke");
    if (!button) return;
    const grant = button.dataset.grant;
    if (await c.invoke("compozy__tool_approvals_revoke", { grant_id: grant }, "revoke " + grant)) {
      draw();
    }
  });
  document.getElementById("refresh").addEventListener("click", draw);
  c.begin(draw);
})();
