// What every page of the board shares: the token (asked once when the daemon has one, kept in
// sessionStorage: for this tab only, never in a URL), GETs of the fragments the daemon renders
// (already escaped), and POSTs to the HTTP API (the Host API the CLI uses) with the token.
"use strict";

window.compozy = (function () {
  const TOKEN_KEY = "compozy.token";
  const tokenForm = document.getElementById("token-form");
  const status = document.getElementById("status");
  let start = null;

  function headers(extra) {
    const token = sessionStorage.getItem(TOKEN_KEY);
    return Object.assign(token ? { Authorization: "Bearer " + token } : {}, extra || {});
  }

  function askToken() {
    status.textContent = "token required";
    tokenForm.hidden = false;
    document.getElementById("token").focus();
  }

  function say(text) {
    status.textContent = text;
  }

  function parse(html) {
    // the fragment comes from our own origin and is escaped by the server's templates; the
    // page's Content-Security-Policy runs no inline script whatever it holds
    const parsed = new DOMParser().parseFromString(html, "text/html");
    return Array.from(parsed.body.childNodes).map((node) => document.adoptNode(node));
  }

  // GET a fragment: its nodes, or null when the token is missing (then asked) or on an error
  async function fragment(url) {
    let response;
    try {
      response = await fetch(url, { headers: headers() });
    } catch (error) {
      say("disconnected");
      return null;
    }
    if (response.status === 401) {
      askToken();
      return null;
    }
    tokenForm.hidden = true;
    if (!response.ok) {
      say("error " + response.status + (await problem(response)));
      return null;
    }
    return parse(await response.text());
  }

  async function problem(response) {
    try {
      const body = await response.json();
      return body.error && body.error.message ? ": " + body.error.message : "";
    } catch (error) {
      return "";
    }
  }

  // swap what `target` shows for `nodes`, keeping the keyboard focus on the element of the
  // same id (a live redraw must not throw a keyboard user back to the top of the page)
  function draw(target, nodes) {
    const focused = target.contains(document.activeElement) ? document.activeElement.id : "";
    target.replaceChildren(...nodes);
    const again = focused ? document.getElementById(focused) : null;
    if (again) again.focus();
  }

  // POST a JSON body; says "<label>: done" or the error in the status line, returns whether
  // it succeeded
  async function post(url, body, label) {
    let response;
    try {
      response = await fetch(url, {
        method: "POST",
        headers: headers({ "Content-Type": "application/json" }),
        body: JSON.stringify(body || {}),
      });
    } catch (error) {
      say(label + ": disconnected");
      return false;
    }
    if (response.status === 401) {
      askToken();
      return false;
    }
    say(response.ok ? label + ": done" : label + ": error " + response.status + (await problem(response)));
    return response.ok;
  }

  // call a tool as `compozy tool invoke` does (POST /api/tools/{id}/invoke)
  function invoke(toolId, input, label) {
    return post("/api/tools/" + encodeURIComponent(toolId) + "/invoke", { input: input }, label);
  }

  // run `first` now and again once the token is given (the token form, on every page)
  function begin(first) {
    start = first;
    start();
  }

  tokenForm.addEventListener("submit", (event) => {
    event.preventDefault();
    sessionStorage.setItem(TOKEN_KEY, document.getElementById("token").value);
    tokenForm.hidden = true;
    if (start) start();
  });

  return { headers, askToken, say, fragment, draw, post, invoke, begin };
})();
