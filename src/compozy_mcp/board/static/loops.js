// Loop runs: their nodes, outputs and errors as the daemon renders them (escaped); a waiting
// gate is answered by a POST to the HTTP API with the tab's token.
"use strict";

(function () {
  const TOKEN_KEY = "compozy.token";
  const main = document.getElementById("loops");
  const status = document.getElementById("status");
  const tokenForm = document.getElementById("token-form");

  function headers(extra) {
    const token = sessionStorage.getItem(TOKEN_KEY);
    return Object.assign(token ? { Authorization: "Bearer " + token } : {}, extra || {});
  }

  async function draw() {
    const response = await fetch("/board/loops", { headers: headers() });
    if (response.status === 401) {
      tokenForm.hidden = false;
      document.getElementById("token").focus();
      return;
    }
    tokenForm.hidden = true;
    const parsed = new DOMParser().parseFromString(await response.text(), "text/html");
    main.replaceChildren(...Array.from(parsed.body.childNodes).map((n) => document.adoptNode(n)));
  }

  main.addEventListener("click", async (event) => {
    const button = event.target.closest("button.gate-answer");
    if (!button) return;
    const response = await fetch(
      "/api/loop-runs/" + encodeURIComponent(button.dataset.run) + "/approve",
      {
        method: "POST",
        headers: headers({ "Content-Type": "application/json" }),
        body: JSON.stringify({
          decision: button.dataset.decision,
          node_id: button.dataset.node,
          wait: true,
        }),
      },
    );
    status.textContent = response.ok ? "answered" : "error " + response.status;
    draw();
  });
  document.getElementById("refresh").addEventListener("click", draw);
  tokenForm.addEventListener("submit", (event) => {
    event.preventDefault();
    sessionStorage.setItem(TOKEN_KEY, document.getElementById("token").value);
    draw();
  });
  draw();
})();
