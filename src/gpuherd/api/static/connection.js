/* gpuherd dashboard: errors, and the connection to the daemon: an action's error answer,
   a banner when the daemon is away or has a new token, an action it did not answer said
   "not done" where it was pressed (dashboard.js has the pages' other behaviours). */
(function () {
  "use strict";

  // htmx swaps no error answer: without this, a refused action showed nothing. Server text
  // goes in with textContent only, never as HTML.

  function errorLine(xhr) {
    var text = xhr.responseText || "";
    try {
      var body = JSON.parse(text);
      if (body && typeof body.error === "string") { return body.error; }
    } catch (ignored) { /* not JSON: the text's first line */ }
    text = text.trim().split("\n")[0];
    if (!text || text.charAt(0) === "<") { text = "the daemon answered " + xhr.status; }
    return text;
  }

  // An action's error replaces the messages shown; a live fragment's error (a job removed
  // under its page) is added to them, once.
  function flashError(text, add) {
    var area = document.getElementById("flash");
    if (!area) { return; }
    var shown = Array.prototype.some.call(area.children, function (box) {
      return box.textContent === text;
    });
    if (add && shown) { return; }
    var box = document.createElement("div");
    box.className = "flash error";
    box.textContent = text;
    if (add) { area.appendChild(box); } else { area.replaceChildren(box); }
  }

  // Action forms answer into `global #flash`: a form that a live refresh replaced while its
  // request waited its turn (hx-sync queue) is no longer in the page, and a plain #flash is
  // looked for among its own detached elements: the answer was dropped, with no message.
  // Messages float over the page's corner: a click puts one away (it may cover a link).
  document.addEventListener("click", function (event) {
    var box = event.target && event.target.closest && event.target.closest("#flash .flash");
    if (box) { box.remove(); }
  });

  // A banner when the page can no longer talk to the daemon: the token changed (`gpuherd ui
  // --new-token`: every request gets 403), or the daemon does not answer (restarting, stopped).
  // A daemon away is said calmly (a restart takes a second); the page reconnects by itself.
  var NEW_TOKEN = ["The dashboard's token has changed: open the dashboard again from ",
    "gpuherd ui", "."];
  var DOWN = ["Reconnecting to the daemon…"];
  var LONG_DOWN = ["The daemon has not answered for a minute; still reconnecting… (",
    "gpuherd daemon status", " says whether it runs)"];
  function banner(parts) {
    var box = document.getElementById("conn-banner");
    if (!box) { return; }
    box.classList.toggle("calm", parts === DOWN || parts === LONG_DOWN);
    box.replaceChildren();
    (parts || []).forEach(function (part, i) {
      var node = i % 2 ? document.createElement("code") : document.createTextNode(part);
      if (i % 2) { node.textContent = part; }
      box.appendChild(node);
    });
    box.hidden = !parts;
  }
  // EventSource does not tell why it failed: ask a cheap URL that needs the token.
  // A daemon stopped (SIGSTOP) or stuck still takes connections and answers nothing: no
  // stream fails and no request ends, and the page went stale saying nothing while its
  // buttons did nothing. So the ping must answer within PING_MS, a request that has waited
  // SLOW_MS asks it too, and while the daemon does not answer it is asked again until it
  // does, at growing intervals (RETRY_MS, each failed ping doubling it up to RETRY_MAX_MS:
  // each failed ping is an error in the browser's console). Once it answers, the streams
  // that failed open again (streams.js) and the page's live parts are drawn anew.
  var PING_MS = 5000, SLOW_MS = 5000, RETRY_MS = 1000, RETRY_MAX_MS = 8000, LONG_MS = 60000;
  var probing = false, pending = null, offline = false, downSince = 0, wait = RETRY_MS;
  function probe() {
    if (probing) { return; }
    clearTimeout(pending);
    pending = null;
    probing = true;
    var late = new AbortController(), down = false;
    var giveUp = setTimeout(function () { late.abort(); }, PING_MS);
    fetch("/ui/ping", { credentials: "same-origin", cache: "no-store", signal: late.signal }).then(
      function (answer) {
        down = answer.status !== 403 && !answer.ok;
        if (answer.status === 403) {
          offline = true;  // no request gets through: none is sent, until a new page
          banner(NEW_TOKEN);
        } else if (!down) {
          back();
        }
      }, function () {
        down = true;
      }).then(function () {
      clearTimeout(giveUp);
      probing = false;
      if (down) { away(); }
    });
  }
  // The daemon away: said, and asked again after `wait`, which grows.
  function away() {
    if (!offline) { downSince = Date.now(); }
    offline = true;
    banner(Date.now() - downSince >= LONG_MS ? LONG_DOWN : DOWN);
    if (!pending) { pending = setTimeout(probe, wait); }
    wait = Math.min(wait * 2, RETRY_MAX_MS);
  }
  function back() {
    var was = offline;
    offline = false;
    wait = RETRY_MS;
    banner(null);
    document.dispatchEvent(new CustomEvent("gpuherd:online"));  // (streams.js)
    if (was) { htmx.trigger(document.body, "refresh"); }  // what changed meanwhile
  }
  document.addEventListener("gpuherd:streamdown", function () {
    if (!probing) { away(); }
  });
  // While the daemon is away, a live refresh (every few seconds) is not sent: it would fail,
  // with an error in the console each time; the page is drawn anew once the daemon is back.
  // An action pressed is sent all the same: it says it was not done (below).
  document.addEventListener("htmx:beforeRequest", function (event) {
    var config = event.detail && event.detail.requestConfig;
    if (offline && config && config.verb === "get") { event.preventDefault(); }
  });
  document.addEventListener("htmx:beforeSend", function (event) {
    var xhr = event.detail && event.detail.xhr;
    if (!xhr) { return; }
    var config = event.detail.requestConfig, action = config && config.verb !== "get";
    if (action) { markAction(config, null); }  // a new press: its form's old mark goes
    var slow = setTimeout(function () {
      probe();
      if (action) { markAction(config, "no answer yet: done only once the daemon answers"); }
    }, SLOW_MS);
    xhr.addEventListener("loadend", function () {
      clearTimeout(slow);
      if (action && xhr.status) { markAction(config, null); }  // answered: #flash says how
    });
  });

  // A button pressed while the daemon is down (stopped, restarted, unreachable) did nothing:
  // the banner said the daemon was away, and nothing said the action was not done. It is
  // said where it was pressed, beside the button, and in the messages.
  function pressedLabel(config) {
    var submit = config.triggeringEvent, button = submit && submit.submitter;
    var label = button ? button.textContent.trim() : "";
    return label || (config.parameters && config.parameters.action) || "this";
  }
  function markAction(config, text) {
    var form = config.elt, mark = form && form.querySelector(".not-done");
    if (mark) { mark.remove(); }
    if (!form || !text) { return; }
    mark = document.createElement("span");
    mark.className = "not-done";
    mark.setAttribute("role", "status");
    mark.textContent = text;
    form.appendChild(mark);
  }
  document.addEventListener("htmx:sendError", function (event) {
    var config = event.detail && event.detail.requestConfig;
    if (config && config.verb !== "get") {
      markAction(config, "not done: the daemon did not answer");
      flashError("\u201c" + pressedLabel(config) + "\u201d was not done: the daemon could " +
        "not be reached; press it again once the daemon is back.", false);
    }
    probe();
  });

  // An error answer is shown from htmx:beforeSwap, which htmx sends to the request's target
  // (#flash for an action, the fragment for a live fetch), not from htmx:responseError, which
  // goes to the element that asked: a live refresh may have replaced that element meanwhile
  // (a job page's head, buttons included, refreshes when the job changes) and no listener
  // hears an event on an element no longer on the page.
  function failed(detail) {
    var xhr = detail.xhr;
    var verb = detail.requestConfig && detail.requestConfig.verb;
    if (xhr.status === 403) { probe(); }
    if (verb !== "get") {
      flashError(errorLine(xhr), false);
    } else if (xhr.status !== 403) {
      flashError(errorLine(xhr), true);
    }
  }
  document.addEventListener("htmx:beforeSwap", function (event) {
    if (event.detail.xhr && event.detail.xhr.status >= 400) { failed(event.detail); }
  });

  // A job's edit refused ("Edit this job": `asks for 5 GPUs but gpuherd has only 4`) was said
  // in the corner alone, where the next message replaces it and a click puts it away. It is
  // said in the form too, under the box it is about (the answer's data-field) or above Save,
  // and stays there, through the live refreshes of the page's head, until the next edit.
  var EDIT = /^\/ui\/jobs\/\d+\/edit$/, refused = null;
  function isEdit(detail) {
    var config = detail && detail.requestConfig;
    return Boolean(config && config.verb === "post" && EDIT.test(config.path));
  }
  function sayRefusal() {
    document.querySelectorAll(".edit-refusal").forEach(function (said) { said.remove(); });
    document.querySelectorAll("details.edit-job [aria-invalid]").forEach(function (box) {
      box.removeAttribute("aria-invalid");
    });
    var form = document.querySelector("details.edit-job form");
    if (!refused || !form || form.getAttribute("hx-post") !== refused.path) { return; }
    var said = document.createElement("span");  // text only, never HTML
    said.className = "edit-refusal";
    said.setAttribute("role", "alert");
    said.textContent = refused.text;
    var box = refused.field && form.querySelector('[name="' + refused.field + '"]');
    if (box) {  // in its label, after the box: read with the box's name
      box.setAttribute("aria-invalid", "true");
      box.insertAdjacentElement("afterend", said);
    } else {
      form.querySelector("#edit-button").insertAdjacentElement("beforebegin", said);
    }
  }
  document.addEventListener("htmx:beforeSend", function (event) {
    if (isEdit(event.detail)) {
      refused = null;
      sayRefusal();
    }
  });
  document.addEventListener("htmx:beforeSwap", function (event) {  // (an error answer)
    if (isEdit(event.detail) && event.detail.xhr.status >= 400) {
      refused = { path: event.detail.requestConfig.path, text: errorLine(event.detail.xhr) };
      sayRefusal();
    }
  });
  document.addEventListener("htmx:afterSwap", function (event) {
    var target = event.detail.target;
    if (isEdit(event.detail) && target && target.id === "flash") {
      var error = target.querySelector(".flash.error");
      refused = error && {
        path: event.detail.requestConfig.path,
        text: error.textContent,
        field: error.getAttribute("data-field"),
      };
      sayRefusal();
    } else if (target && target.id === "job-head") {
      sayRefusal();  // the form drawn again: said again
    }
  });
  document.addEventListener("htmx:sseOpen", function () {
    if (!offline) { banner(null); }
  });
})();
