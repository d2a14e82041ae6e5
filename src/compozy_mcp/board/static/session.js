// A session's page: its details, pending interactions and transcript as the daemon renders
// them (escaped), redrawn on each of its events; prompt, cancel, archive and answers are POSTs
// to the HTTP API (the Host API the CLI uses) with the tab's token.
"use strict";

(function () {
  const TOKEN_KEY = "compozy.token";
  const id = new URLSearchParams(location.search).get("id") || "";
  const path = "/api/sessions/" + encodeURIComponent(id);
  const main = document.getElementById("session");
  const status = document.getElementById("status");
  const tokenForm = document.getElementById("token-form");
  let pending = null;

  function headers(extra) {
    const token = sessionStorage.getItem(TOKEN_KEY);
    return Object.assign(token ? { Authorization: "Bearer " + token } : {}, extra || {});
  }

  async function draw() {
    const response = await fetch("/board/session?id=" + encodeURIComponent(id), {
      headers: headers(),
    });
    if (response.status === 401) {
      tokenForm.hidden = false;
      document.getElementById("token").focus();
      return false;
    }
    tokenForm.hidden = true;
    const parsed = new DOMParser().parseFromString(await response.text(), "text/html");
    main.replaceChildren(...Array.from(parsed.body.childNodes).map((n) => document.adoptNode(n)));
    const name = main.querySelector(".name");
    document.title = (name ? name.textContent : id) + " · compozy";
    return true;
  }

  function redrawSoon() {
    if (pending) return;
    pending = setTimeout(() => {
      pending = null;
      draw();
    }, 150);
  }

  async function post(action, body) {
    const response = await fetch(path + "/" + action, {
      method: "POST",
      headers: headers({ "Content-Type": "application/json" }),
      body: JSON.stringify(body || {}),
    });
    status.textContent = response.ok ? action + ": done" : action + ": error " + response.status;
    redrawSoon();
  }

  async function follow() {
    const response = await fetch(path + "/events", {
      headers: headers({ Accept: "text/event-stream" }),
    });
    if (!response.ok || !response.body) return;
    status.textContent = "live";
    const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
    for (;;) {
      const chunk = await reader.read().catch(() => ({ done: true }));
      if (chunk.done) break;
      redrawSoon();
    }
    status.textContent = "disconnected; retrying";
    setTimeout(follow, 2000);
  }

  document.getElementById("prompt-form").addEventListener("submit", (event) => {
    event.preventDefault();
    const prompt = document.getElementById("prompt");
    post("prompt", { prompt: prompt.value });
    prompt.value = "";
  });
  document.getElementById("cancel").addEventListener("click", () => post("cancel"));
  document.getElementById("archive").addEventListener("click", () => post("archive"));
  main.addEventListener("click", (event) => {
    const button = event.target.closest("button.decide");
    if (button) {
      post("approve", {
        interaction_id: button.dataset.interaction,
        decision: button.dataset.decision,
      });
    }
  });
  tokenForm.addEventListener("submit", async (event) => {
    event.preventDefault();
    sessionStorage.setItem(TOKEN_KEY, document.getElementById("token").value);
    if (await draw()) follow();
  });
  draw().then((ok) => ok && follow());
})();
