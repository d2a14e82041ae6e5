// Hook runs, newest first, as `compozy hooks runs --full` shows them: outcome, decision, what
// failed and the hook's stderr (rendered escaped by the daemon); "Older runs" pages on.
"use strict";

(function () {
  const c = window.compozy;
  const main = document.getElementById("hooks");
  const failedOnly = document.getElementById("failed-only");

  function url(cursor) {
    const query = new URLSearchParams();
    if (failedOnly.checked) query.set("failed", "1");
    if (cursor) query.set("cursor", cursor);
    return "/board/hooks?" + query.toString();
  }

  async function draw() {
    const nodes = await c.fragment(url(""));
    if (nodes !== null) c.draw(main, nodes);
  }

  main.addEventListener("click", async (event) => {
    const button = event.target.closest("button.older");
    if (!button) return;
    const nodes = await c.fragment(url(button.dataset.cursor));
    if (nodes === null) return;
    const list = button.parentElement;
    button.remove();
    for (const node of nodes) {
      if (node.nodeType === Node.ELEMENT_NODE) list.append(...node.childNodes);
    }
    const first = list.querySelector("button.older");
    if (first) first.focus();
  });
  failedOnly.addEventListener("change", draw);
  document.getElementById("refresh").addEventListener("click", draw);
  c.begin(draw);
})();
