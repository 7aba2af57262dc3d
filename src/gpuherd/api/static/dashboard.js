/* gpuherd dashboard: the few behaviours htmx attributes do not cover. No build step, no
   inline scripts (the pages' Content-Security-Policy allows scripts from /static only). */
(function () {
  "use strict";

  var BOXES = 'input[name="ids"][form="bulk"]';

  // A click is a press and a release on the same element: a live refresh between the two (a
  // busy queue refreshes the jobs table several times a second; a job's page refreshes its
  // head when the job changes) replaced the button under the pointer, and the click was lost.
  // While a pointer is down no fragment holding the pressed element is swapped; one refresh
  // follows the release (after its click has been handled).
  var pressed = null, deferred = false;
  document.addEventListener("pointerdown", function (event) { pressed = event.target; }, true);
  function released() {
    pressed = null;
    if (deferred) {
      deferred = false;
      setTimeout(function () { htmx.trigger(document.body, "refresh"); }, 0);
    }
  }
  document.addEventListener("pointerup", released, true);
  document.addEventListener("pointercancel", released, true);

  // A job page's forms one types in (its edit form, "Move before job N") are in its head,
  // which a live refresh replaces (the job changed, or its stream reconnected): an open form
  // stays open, and what was typed (a field unlike its `was.` twin) stays typed, unless the
  // job's value itself changed (saved, or from a shell): that shows. Kept, a saved begin of
  // "+2h" went again with the next save, and moved the job's time.
  var editing = null, TYPED_IN = ["details.edit-job", "form.move-before"];
  function typedEdits(head) {
    var state = { boxes: {}, focus: null, at: null }, focus = document.activeElement;
    TYPED_IN.forEach(function (selector) {
      var box = head.querySelector(selector), typed = {};
      if (!box || box.open === false) { return; }  // a closed <details>: nothing to keep
      box.querySelectorAll("[name]").forEach(function (field) {
        var was = box.querySelector('input[name="was.' + field.name + '"]');
        if (was && field.value !== was.value) { typed[field.name] = [field.value, was.value]; }
      });
      state.boxes[selector] = typed;
      if (focus && box.contains(focus)) {
        state.focus = [selector, focus.name];
        state.at = [focus.selectionStart, focus.selectionEnd];
      }
    });
    return state;
  }
  function restoreEdits(head, state) {
    Object.keys(state.boxes).forEach(function (selector) {
      var box = head.querySelector(selector), typed = state.boxes[selector];
      if (!box) { return; }  // the job started meanwhile: nothing left to edit or move
      if (box.open === false) { box.open = true; }
      Object.keys(typed).forEach(function (name) {
        var field = box.querySelector('[name="' + name + '"]');
        var was = box.querySelector('input[name="was.' + name + '"]');
        if (field && was && was.value === typed[name][1]) { field.value = typed[name][0]; }
      });
    });
    var box = state.focus && head.querySelector(state.focus[0]);
    var focus = box && box.querySelector('[name="' + state.focus[1] + '"]');
    if (focus) {
      focus.focus();
      if (state.at && state.at[0] !== null && focus.setSelectionRange) {
        focus.setSelectionRange(state.at[0], state.at[1]);
      }
    }
  }

  // The keyboard's place survives a live refresh. The refresh replaces the element that has
  // the focus (a button Tab reached in the jobs table, a job's buttons), and the focus fell
  // to the page: Enter then did nothing, and the next Tab began again at the top. It is found
  // again in the new fragment by where it was (the nearest element with an id: a job's row)
  // and what it is (name, value, link), else by its place there (the job's state changed,
  // "hold" became "release").
  var focused = null;
  var CONTROLS = "a[href], button, summary, input:not([type=hidden]), select, textarea";
  function focusKey(target) {
    var el = document.activeElement;
    if (!el || el === target || !target.contains(el) || !el.matches(CONTROLS)) { return null; }
    var holder = el.parentElement.closest("[id]");
    if (!holder || !target.contains(holder)) { holder = target; }
    return {
      holder: holder.id,
      at: Array.prototype.indexOf.call(holder.querySelectorAll(CONTROLS), el),
      same: [el.tagName, el.getAttribute("name"), el.getAttribute("value"), el.getAttribute("href")],
    };
  }
  function refocus(key) {
    var active = document.activeElement;
    if (active && active !== document.body) { return; }  // kept, or moved on meanwhile
    var holder = document.getElementById(key.holder);
    var controls = holder ? holder.querySelectorAll(CONTROLS) : [];
    var found = Array.prototype.find.call(controls, function (el) {
      var mine = [el.tagName, el.getAttribute("name"), el.getAttribute("value"),
        el.getAttribute("href")];
      return mine.every(function (part, i) { return part === key.same[i]; });
    }) || controls[Math.min(key.at, controls.length - 1)];
    if (found) { found.focus({ preventScroll: true }); }
  }

  // Ticked job boxes stay ticked when the live jobs table is fetched again (and "select all"
  // stays ticked while every one is).
  var ticked = null, opened = [];
  document.addEventListener("htmx:beforeSwap", function (event) {
    if (event.detail.xhr && event.detail.xhr.status >= 400) { return; }  // (connection.js)
    var target = event.detail.target, config = event.detail.requestConfig;
    var live = config && config.verb === "get";  // live fragments are fetched; actions post
    if (live && pressed && target && target.contains(pressed)) {
      event.detail.shouldSwap = false;
      deferred = true;
      return;
    }
    if (target && target.id === "job-head" && event.detail.shouldSwap) {
      editing = typedEdits(target);
    }
    if (live && target && event.detail.shouldSwap) { focused = focusKey(target); }
    if (event.detail.target && event.detail.target.id === "jobs-live") {
      ticked = Array.prototype.map.call(
        document.querySelectorAll(BOXES + ":checked"),
        function (box) { return box.value; }
      );
      opened = Array.prototype.map.call(
        document.querySelectorAll(MENUS + "[open]"),
        function (menu) { return menu.closest("tr").id; }
      );
    }
  });
  // A bulk action answered, its ticks go: left ticked (killed now, say), the rows were acted
  // on again by the next bulk button, with nothing ticked anew. Only the rows it was sent
  // for: a box ticked while the answer was on its way is the user's next choice.
  document.addEventListener("htmx:afterRequest", function (event) {
    var form = event.detail.elt, config = event.detail.requestConfig;
    if (!form || form.id !== "bulk" || !event.detail.successful) { return; }
    var sent = config && config.formData ? config.formData.getAll("ids") : [];
    document.querySelectorAll(BOXES).forEach(function (box) {
      if (sent.indexOf(box.value) !== -1) { box.checked = false; }
    });
    document.querySelectorAll(".select-all").forEach(function (head) {
      head.checked = head.checked && !sent.length;
    });
  });
  document.addEventListener("htmx:afterSwap", function (event) {
    if (event.detail.target && event.detail.target.id === "job-head" && editing) {
      restoreEdits(event.detail.target, editing);
      editing = null;
    }
    if (event.detail.target && event.detail.target.id === "jobs-live" && ticked) {
      var boxes = document.querySelectorAll(BOXES), all = true;
      boxes.forEach(function (box) {
        box.checked = ticked.indexOf(box.value) !== -1;
        all = all && box.checked;
      });
      document.querySelectorAll(".select-all").forEach(function (head) {
        head.checked = all && boxes.length > 0;
      });
      ticked = null;
      opened.forEach(function (row) {
        var menu = document.querySelector("#" + CSS.escape(row) + " " + MENUS);
        if (menu) { menu.open = true; }
      });
      opened = [];
    }
    if (focused) {
      refocus(focused);
      focused = null;
    }
  });

  // A button that kills work or deletes logs (data-confirm: kill or retry a running job,
  // remove, the bulk ones) asks first. Capturing at the document runs before htmx's own
  // submit listener on the form, so a "no" sends nothing. A bulk button with no row ticked
  // asks nothing (it asked "Kill the selected jobs?", then answered that none was): the
  // server's answer says to tick some. With some, it says how many ("Kill the 3 selected
  // jobs?"): a "select all" ticks the whole page, maybe more than the user had in mind.
  document.addEventListener("submit", function (event) {
    var button = event.submitter, question = button && button.dataset.confirm;
    var count = document.querySelectorAll(BOXES + ":checked").length;
    var noneTicked = event.target.id === "bulk" && !count;
    if (question) {
      question = question.replace("{selected}", count + " selected job" + (count === 1 ? "" : "s"));
    }
    if (question && !noneTicked && !window.confirm(question)) {
      event.preventDefault();
      event.stopImmediatePropagation();
    }
  }, true);

  // A jobs row's menu of actions (⋯, on a window narrower than 1200 px) stays open through
  // the table's live refresh (above; a busy queue refreshes it several times a second), and
  // closes when one of its actions is sent, on a click elsewhere, and on Escape.
  var MENUS = "details.more-actions";
  function closeMenus(except) {
    document.querySelectorAll(MENUS + "[open]").forEach(function (menu) {
      if (menu !== except) { menu.open = false; }
    });
  }
  document.addEventListener("submit", function () { closeMenus(null); });
  document.addEventListener("click", function (event) {
    closeMenus(event.target && event.target.closest && event.target.closest(MENUS));
  });
  // The keyboard leaving a menu (Tab past its last action) closes it: it stayed open over the
  // next rows. (No relatedTarget: the focus went nowhere, a live refresh replaced the row.)
  document.addEventListener("focusout", function (event) {
    var menu = event.target.closest && event.target.closest(MENUS + "[open]");
    if (menu && event.relatedTarget && !menu.contains(event.relatedTarget)) { menu.open = false; }
  });
  document.addEventListener("keydown", function (event) {
    var menu = document.activeElement && document.activeElement.closest &&
      document.activeElement.closest(MENUS + "[open]");
    if (event.key === "Escape" && menu) {
      menu.open = false;
      menu.querySelector("summary").focus();
    }
  });

  // "Select all" ticks every job box on the page.
  document.addEventListener("change", function (event) {
    var target = event.target;
    if (target && target.classList && target.classList.contains("select-all")) {
      document.querySelectorAll(BOXES).forEach(function (box) { box.checked = target.checked; });
    }
  });

  // A job page's stream opened again (the extension's reconnect, or a tab shown again:
  // streams.js reads sse-connect anew) goes on where the page is: its logs from the offsets
  // of their last text (`resume`), its head from the mark it was last drawn at (`since`: the
  // stream says `state` only for changes after it, not at once). Its other parameters stay:
  // `latest` tells a new attempt (the page follows it) from an older one shown on purpose.
  function resumeAt(name, value) {
    var source = document.getElementById("job-stream");
    if (!source || !value) { return; }
    var parts = source.getAttribute("sse-connect").split("?");
    var query = new URLSearchParams(parts[1] || "");
    query.set(name, value);
    source.setAttribute("sse-connect", parts[0] + "?" + query.toString());
  }
  document.addEventListener("htmx:afterSwap", function (event) {
    var head = event.detail.target;
    var drawn = head && head.id === "job-head" && head.querySelector("[data-since]");
    if (drawn) { resumeAt("since", drawn.getAttribute("data-since")); }
  });
  document.addEventListener("htmx:sseMessage", function (event) {
    var message = event.detail || {};
    if (message.type === "stdout" || message.type === "stderr") {
      resumeAt("resume", message.lastEventId);  // (logs.js shows the text)
    } else if (message.type === "attempt") {
      followAttempt();
    }
  });
  // Following a new attempt loads the page again: the answer of the retry that began it (`job
  // 56: queued again`) went with the old page, and the button seemed to do nothing. An action
  // still unanswered is waited for, and the messages shown are carried over to the new page.
  var KEPT = "gpuherd.flash", unanswered = 0, follow = false;
  function followAttempt() {
    if (unanswered) { follow = true; return; }
    var area = document.getElementById("flash"), path = window.location.pathname;
    var shown = Array.prototype.map.call(area ? area.children : [], function (box) {
      return [box.classList.contains("error"), box.textContent];
    });
    try {
      sessionStorage.setItem(KEPT, JSON.stringify({ path: path, shown: shown }));
    } catch (ignored) { /* no storage: the page follows all the same */ }
    window.location.assign(path);
  }
  document.addEventListener("htmx:beforeRequest", function (event) {
    var xhr = event.detail.xhr, config = event.detail.requestConfig;
    if (!xhr || !config || config.verb !== "post") { return; }
    unanswered++;
    // (on the request, not its form: a refresh of the head may have replaced the form)
    xhr.addEventListener("loadend", function () {
      unanswered--;
      if (!unanswered && follow) {
        follow = false;
        followAttempt();
      }
    });
  });
  document.addEventListener("DOMContentLoaded", function () {
    var kept = null, area = document.getElementById("flash");
    try {
      kept = JSON.parse(sessionStorage.getItem(KEPT) || "null");
      sessionStorage.removeItem(KEPT);
    } catch (ignored) { /* none kept */ }
    if (!kept || !area || kept.path !== window.location.pathname) { return; }
    kept.shown.forEach(function (message) {
      var box = document.createElement("div");  // text only, never HTML (connection.js)
      box.className = message[0] ? "flash error" : "flash ok";
      box.textContent = message[1];
      area.appendChild(box);
    });
  });

  // A sweep's plot: choosing a metric or a parameter shows it (the form works without us too).
  // The keyboard moves through a select's options with the arrows, a `change` at each: the page
  // reloaded at the first arrow, the focus lost. From the keyboard, Enter applies the choice.
  var keyed = false;
  function autosubmit(target) {
    return target && target.hasAttribute && target.hasAttribute("data-autosubmit") && target.form;
  }
  document.addEventListener("change", function (event) {
    if (autosubmit(event.target) && !keyed) { event.target.form.submit(); }
  });
  document.addEventListener("keydown", function (event) {
    if (!autosubmit(event.target) || event.key === "Tab") { return; }
    keyed = true;
    if (event.key === "Enter") {
      event.preventDefault();
      event.target.form.submit();
    }
  }, true);
  document.addEventListener("pointerdown", function () { keyed = false; }, true);
  // No live refresh of a sweep's page while one of its selects is open or focused.
  document.addEventListener("htmx:beforeRequest", function (event) {
    var target = event.detail && event.detail.target;
    var active = document.activeElement;
    if (target && target.id === "sweep-live" && active && active.closest &&
        active.closest(".plot-controls")) {
      event.preventDefault();
    }
  });
})();
