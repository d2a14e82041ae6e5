// The operator's board: draws the cards the daemon renders (already escaped) and redraws them
// on each event of /board/stream, the one stream of the board.
"use strict";

(function () {
  const c = window.compozy;
  const board = document.getElementById("board");
  const filters = document.getElementById("filters");
  let reader = null;

  function archived() {
    return document.getElementById("filter-archived").checked ? "1" : "0";
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

  function drawCards(html) {
    const parsed = new DOMParser().parseFromString(html, "text/html");
    const columns = parsed.body.firstElementChild;
    c.draw(board, columns ? [document.adoptNode(columns)] : []);
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
      response = await fetch("/board/stream?archived=" + archived(), { headers: c.headers() });
    } catch (error) {
      c.say("disconnected; retrying");
      setTimeout(follow, 2000);
      return;
    }
    if (response.status === 401) {
      c.askToken();
      return;
    }
    if (!response.ok || !response.body) {
      c.say("error " + response.status);
      return;
    }
    c.say("live");
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
        if (data.length) drawCards(data.join("\n"));
      }
    }
    if (reader === current) {
      c.say("disconnected; retrying");
      setTimeout(follow, 2000);
    }
  }

  filters.addEventListener("input", applyFilters);
  filters.addEventListener("submit", (event) => event.preventDefault());
  document.getElementById("filter-archived").addEventListener("change", follow);
  c.begin(follow);
})();
