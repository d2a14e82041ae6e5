// The operator's board: draws the cards the daemon renders (already escaped) and redraws them
// on each event of /board/stream. The token, when the daemon has one, is asked once and kept
// in sessionStorage: for this tab only, never in a URL.
"use strict";

(function () {
  const TOKEN_KEY = "compozy.token";
  const board = document.getElementById("board");
  const status = document.getElementById("status");
  const tokenForm = document.getElementById("token-form");
  const filters = document.getElementById("filters");
  let reader = null;

  function headers() {
    const token = sessionStorage.getItem(TOKEN_KEY);
    return token ? { Authorization: "Bearer " + token } : {};
  }

  function archived() {
    return document.getElementById("filter-archived").checked ? "1" : "0";
  }

  function askToken() {
    tokenForm.hidden = false;
    document.getElementById("token").focus();
  }

  function matches(card, field, value) {
    return !value || (card.dataset[field] || "").toLowerCase().includes(value);
  }

  function applyFilters() {
    const get = (id) => document.getElementById(id).value.trim().toLowerCase();
    const workspace = get("filter-workspace");
    const agent = get("filter-agent");
    const state = get("filter-state");
    const text = get("filter-text");
    for (const card of board.querySelectorAll(".card")) {
      card.hidden = !(
        matches(card, "workspace", workspace) &&
        matches(card, "agent", agent) &&
        matches(card, "state", state) &&
        (!text || card.textContent.toLowerCase().includes(text))
      );
    }
  }

  function draw(html) {
    // the fragment comes from our own origin and is escaped by the server's templates;
    // the page's Content-Security-Policy runs no inline script whatever it holds
    const parsed = new DOMParser().parseFromString(html, "text/html");
    const columns = parsed.body.firstElementChild;
    board.replaceChildren(...(columns ? [document.adoptNode(columns)] : []));
    const needsYou = columns ? Number(columns.dataset.needsYou || 0) : 0;
    document.title = (needsYou ? "(" + needsYou + ") " : "") + "compozy board";
    applyFilters();
  }

  async function follow() {
    if (reader) {
      reader.cancel();
      reader = null;
    }
    let response;
    try {
      response = await fetch("/board/stream?archived=" + archived(), { headers: headers() });
    } catch (error) {
      status.textContent = "disconnected; retrying";
      setTimeout(follow, 2000);
      return;
    }
    if (response.status === 401) {
      status.textContent = "token required";
      askToken();
      return;
    }
    if (!response.ok || !response.body) {
      status.textContent = "error " + response.status;
      return;
    }
    tokenForm.hidden = true;
    status.textContent = "live";
    const current = response.body.pipeThrough(new TextDecoderStream()).getReader();
    reader = current;
    let buffer = "";
    for (;;) {
      let chunk;
      try {
        chunk = await current.read();
      } catch (error) {
        break;
      }
      if (chunk.done) break;
      buffer += chunk.value;
      let end;
      while ((end = buffer.indexOf("\n\n")) >= 0) {
        const frame = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const data = frame
          .split("\n")
          .filter((line) => line.startsWith("data: ") || line === "data:")
          .map((line) => line.slice(line.startsWith("data: ") ? 6 : 5));
        if (data.length) draw(data.join("\n"));
      }
    }
    if (reader === current) {
      status.textContent = "disconnected; retrying";
      setTimeout(follow, 2000);
    }
  }

  tokenForm.addEventListener("submit", (event) => {
    event.preventDefault();
    sessionStorage.setItem(TOKEN_KEY, document.getElementById("token").value);
    follow();
  });
  filters.addEventListener("input", applyFilters);
  filters.addEventListener("submit", (event) => event.preventDefault());
  document.getElementById("filter-archived").addEventListener("change", follow);
  follow();
})();
