// A session's page: its details and pending interactions as the daemon renders them (escaped),
// redrawn on each of its events, and its whole transcript, read a page at a time and then
// followed as it grows. Prompt, cancel, answers, rename, stop and archive are POSTs to the HTTP
// API (the Host API the CLI uses).
"use strict";

(function () {
  const c = window.compozy;
  const id = new URLSearchParams(location.search).get("id") || "";
  const path = "/api/sessions/" + encodeURIComponent(id);
  const details = document.getElementById("session");
  const transcript = document.getElementById("transcript-events");
  let cursor = 0;
  let reading = null;
  let readAgain = false;
  let pending = null;
  let following = false;

  async function drawDetails() {
    const nodes = await c.fragment("/board/session?id=" + encodeURIComponent(id));
    if (nodes === null) return false;
    c.draw(details, nodes);
    const name = details.querySelector(".name");
    document.title = (name ? name.textContent : id) + " · compozy";
    return true;
  }

  // the events of a page, after those shown: an agent's message streamed in chunks goes on
  // in the line it started in
  function append(page) {
    for (const line of Array.from(page.children)) {
      const last = transcript.lastElementChild;
      const kind = line.dataset.kind || "";
      if (last && kind.endsWith("_chunk") && last.dataset.kind === kind) {
        last.querySelector("pre").textContent += line.querySelector("pre").textContent;
      } else {
        transcript.append(line);
      }
    }
  }

  // read the transcript after the cursor until it has all of it (a long session is readable
  // to its end); a read asked for meanwhile runs once this one ends
  function readTranscript() {
    if (reading) {
      readAgain = true;
      return reading;
    }
    reading = (async () => {
      do {
        readAgain = false;
        for (;;) {
          const nodes = await c.fragment(
            "/board/transcript?id=" + encodeURIComponent(id) + "&cursor=" + cursor,
          );
          const page = nodes && nodes.find((node) => node.nodeType === Node.ELEMENT_NODE);
          if (!page) break;
          append(page);
          cursor = Number(page.dataset.nextCursor);
          if (page.dataset.more !== "true") break;
        }
      } while (readAgain);
      reading = null;
    })();
    return reading;
  }

  function refreshSoon() {
    if (pending) return;
    pending = setTimeout(() => {
      pending = null;
      drawDetails();
      readTranscript();
    }, 150);
  }

  async function follow() {
    let response;
    try {
      response = await fetch(path + "/events?cursor=" + cursor, {
        headers: c.headers({ Accept: "text/event-stream" }),
      });
    } catch (error) {
      response = null;
    }
    if (response && response.ok && response.body) {
      c.say("live");
      const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
      for (;;) {
        const chunk = await reader.read().catch(() => ({ done: true }));
        if (chunk.done) break;
        refreshSoon();
      }
    }
    c.say("disconnected; retrying");
    setTimeout(follow, 2000);
  }

  async function start() {
    if (!(await drawDetails())) return;
    await readTranscript();
    if (!following) {
      following = true;
      follow();
    }
  }

  async function act(done) {
    if (await done) refreshSoon();
  }

  document.getElementById("prompt-form").addEventListener("submit", (event) => {
    event.preventDefault();
    const prompt = document.getElementById("prompt");
    act(c.post(path + "/prompt", { prompt: prompt.value }, "prompt"));
    prompt.value = "";
  });
  document.getElementById("cancel").addEventListener("click", () => {
    act(c.post(path + "/cancel", {}, "cancel"));
  });
  document.getElementById("archive").addEventListener("click", () => {
    act(c.post(path + "/archive", {}, "archive"));
  });
  document.getElementById("stop").addEventListener("click", () => {
    act(c.invoke("compozy__session_stop", { session_id: id }, "stop"));
  });
  document.getElementById("rename-form").addEventListener("submit", (event) => {
    event.preventDefault();
    const name = document.getElementById("new-name");
    act(c.invoke("compozy__session_rename", { session_id: id, name: name.value }, "rename"));
  });
  details.addEventListener("click", (event) => {
    const button = event.target.closest("button.decide");
    if (button) {
      const answer = { interaction_id: button.dataset.interaction, decision: button.dataset.decision };
      act(c.post(path + "/approve", answer, "approve"));
    }
  });
  c.begin(start);
})();
