// Tasks by state, as the daemon renders them (escaped); a delivery in review is accepted or
// sent back with comments by a POST to the HTTP API with the tab's token.
"use strict";

(function () {
  const TOKEN_KEY = "compozy.token";
  const main = document.getElementById("tasks");
  const status = document.getElementById("status");
  const tokenForm = document.getElementById("token-form");

  function headers(extra) {
    const token = sessionStorage.getItem(TOKEN_KEY);
    return Object.assign(token ? { Authorization: "Bearer " + token } : {}, extra || {});
  }

  async function draw() {
    const response = await fetch("/board/tasks", { headers: headers() });
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
    const button = event.target.closest("button.task-review");
    if (!button) return;
    const task = button.dataset.task;
    const body = { decision: button.dataset.decision };
    if (body.decision === "request_changes") {
      const input = main.querySelector('input.task-comments[data-task="' + CSS.escape(task) + '"]');
      body.comments = input ? input.value : "";
      if (!body.comments) {
        status.textContent = "say what to change";
        if (input) input.focus();
        return;
      }
    }
    const response = await fetch("/api/tasks/" + encodeURIComponent(task) + "/review", {
      method: "POST",
      headers: headers({ "Content-Type": "application/json" }),
      body: JSON.stringify(body),
    });
    status.textContent = response.ok ? "reviewed" : "error " + response.status;
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
