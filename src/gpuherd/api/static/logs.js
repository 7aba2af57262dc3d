/* gpuherd dashboard: a job page's logs as their text arrives (the stream's events, appended
   by htmx): redrawn lines, the log's cap, its whole lines folded, and following its end; and
   a running job's run time counting on. No build step, no inline scripts. */
(function () {
  "use strict";

  // Log tails: stay at the bottom while new text arrives (unless the reader scrolled up).
  function atBottom(pre) {
    return pre.scrollTop + pre.clientHeight >= pre.scrollHeight - 8;
  }
  document.addEventListener("htmx:sseBeforeMessage", function (event) {
    var pre = event.target;
    if (pre && pre.classList && pre.classList.contains("log")) {
      pre.dataset.follow = atBottom(pre) ? "1" : "";
    }
  });
  // A line redrawn with a carriage return (a progress bar) arrives with a marker where the
  // return was: the text since the line's start goes, as a terminal overwrites it. A marker
  // with nothing after it yet waits: a terminal shows the line until something overwrites it.
  // The markers are found in one pass, in order: looked for from the log's start once per
  // marker, a chatty job's progress bar (thousands of returns a second, a log of thousands
  // of lines) kept the page busy for seconds at a time, its buttons dead.
  function redraw(pre) {
    var marks = pre.querySelectorAll("i.cr");
    for (var i = 0; i < marks.length; i++) {
      var mark = marks[i];
      if (!mark.nextSibling) { break; }  // the log's last node: nothing overwrote it yet
      var node = mark.previousSibling;
      while (node && !folded(node)) {  // folded lines end with a newline: the line starts after
        var before = node.previousSibling;
        var cut = node.nodeType === Node.TEXT_NODE ? node.data.lastIndexOf("\n") : -1;
        if (cut >= 0) {
          node.data = node.data.slice(0, cut + 1);
          break;
        }
        pre.removeChild(node);
        node = before;
      }
      pre.removeChild(mark);
    }
  }
  // A page left open on a chatty job kept every line it was sent: the log grew without end
  // (hundreds of MB overnight, and the tab with it). It keeps about the last LOG_KEEP
  // characters, in whole lines; the note above the log points to the full log.
  var LOG_LIMIT = 1024 * 1024, LOG_KEEP = 768 * 1024;
  function trim(pre) {
    var drop = pre.textContent.length - LOG_KEEP;
    if (drop <= LOG_LIMIT - LOG_KEEP) { return; }
    while (drop > 0 && pre.firstChild) {
      var node = pre.firstChild, size = node.textContent.length;
      var text = folded(node) ? node.firstChild : node;
      if (size > drop && text && text.nodeType === Node.TEXT_NODE) {
        var cut = text.data.indexOf("\n", drop);
        text.data = cut >= 0 ? text.data.slice(cut + 1) : "";
        if (!text.data && text !== node) { pre.removeChild(node); }  // an empty line, else
        break;
      }
      pre.removeChild(node);
      drop -= size;
    }
    var note = document.getElementById(pre.id + "-cut");
    if (note) { note.hidden = false; }
  }
  // A browser lays out the lines of one block together: each text added to a log laid out
  // all of it again, 80 ms a message for a page's 500 KiB, so a page open on a chatty job
  // grew busy, then frozen, its buttons dead. Its whole lines are folded, FOLD_AT characters
  // or more at a time, into a `span.lines` (an inline-block, laid out once: dashboard.css);
  // only the lines since are laid out again as text comes. Text and copies are unchanged.
  var FOLD_AT = 16 * 1024;
  function folded(node) {
    return node.nodeType === Node.ELEMENT_NODE && node.classList.contains("lines");
  }
  function fold(pre) {
    var first = pre.lastChild, size = 0, end = null;
    while (first && !folded(first)) {
      size += first.textContent.length;
      if (!end && first.nodeType === Node.TEXT_NODE && first.data.indexOf("\n") >= 0) {
        end = first;
      }
      if (!first.previousSibling || folded(first.previousSibling)) { break; }
      first = first.previousSibling;
    }
    if (!end || size < FOLD_AT) { return; }
    end.splitText(end.data.lastIndexOf("\n") + 1);  // the line after the last newline goes on
    var lines = document.createElement("span"), stop = end.nextSibling;
    lines.className = "lines";
    var text = "";
    while (first !== stop) {
      var next = first.nextSibling;
      text += first.textContent;
      pre.removeChild(first);
      first = next;
    }
    lines.textContent = text;
    pre.insertBefore(lines, stop);
  }

  document.addEventListener("htmx:sseMessage", function (event) {
    var message = event.detail || {};
    var pre = event.target;
    if (message.type === "stdout" || message.type === "stderr") {
      redraw(pre);
      trim(pre);
      fold(pre);
      if (pre.dataset.follow) { pre.scrollTop = pre.scrollHeight; }
    }
  });
  // An empty log's words (job.html's data-empty) follow the job: "not started" stayed under a
  // job that had started and not yet written. Its head, drawn again, says what they are now.
  document.addEventListener("htmx:afterSwap", function (event) {
    var head = event.detail.target;
    var drawn = head && head.id === "job-head" && head.querySelector("[data-empty-log]");
    if (!drawn) { return; }
    document.querySelectorAll("pre.log[data-empty]").forEach(function (pre) {
      if (pre.dataset.empty) { pre.dataset.empty = drawn.dataset.emptyLog; }  // (none: a note)
    });
  });
  document.addEventListener("DOMContentLoaded", function () {
    document.querySelectorAll("pre.log").forEach(function (pre) { pre.scrollTop = pre.scrollHeight; });
  });

  // A running job's run time (#job-runtime) counts on: its head is drawn again only when the
  // job changes, and the time it was drawn with stood still. The daemon gives the seconds run
  // as it drew the head (data-ran); the browser's clock only measures what passed since, so a
  // browser whose clock is set otherwise shows the same time. Written as the daemon writes
  // durations (core/units.py, format_duration: 41.2s, 3m05s, 2h01m, 3d04h). A paused or
  // ended job's head has no #job-runtime: its time stands still.
  var timed = null, timedSince = 0, timedRan = 0;
  function two(n) { return (n < 10 ? "0" : "") + n; }
  function duration(seconds) {
    if (Math.round(seconds * 10) / 10 < 60) { return seconds.toFixed(1) + "s"; }
    var total = Math.round(seconds);
    if (total < 3600) { return Math.floor(total / 60) + "m" + two(total % 60) + "s"; }
    if (total < 86400) {
      return Math.floor(total / 3600) + "h" + two(Math.floor((total % 3600) / 60)) + "m";
    }
    return Math.floor(total / 86400) + "d" + two(Math.floor((total % 86400) / 3600)) + "h";
  }
  function tick() {
    var shown = document.getElementById("job-runtime");
    if (shown !== timed) {  // the head drawn again: its own seconds, counted from now
      timed = shown;
      timedSince = performance.now();
      timedRan = shown ? parseFloat(shown.getAttribute("data-ran")) || 0 : 0;
      return;
    }
    if (timed) { timed.textContent = duration(timedRan + (performance.now() - timedSince) / 1000); }
  }
  document.addEventListener("DOMContentLoaded", function () {
    if (!document.getElementById("job-head")) { return; }  // (a job's page only)
    tick();
    document.addEventListener("htmx:afterSwap", tick);
    setInterval(tick, 1000);
  });
})();
