/* gpuherd dashboard: the event streams of tabs in the background. Loaded after sse.min.js,
   whose streams it makes (htmx.createEventSource). No build step, no inline scripts. */
(function () {
  "use strict";

  // ---- tabs in the background ---------------------------------------------------------------
  // A browser opens at most 6 connections to one host (HTTP/1.1) and every dashboard page holds
  // one for its event stream: with six tabs open a seventh did not load, and no tab's buttons
  // or refreshes got through. A tab hidden for HIDDEN_CLOSE ms closes its stream and opens it
  // again once shown; the page catches up (its sse-connect holds the mark the page was drawn
  // at, and the stream says `change` for what came after; a job's log resumes at the offsets
  // its sse-connect holds by then). The sse extension gets a Stream, not the EventSource
  // itself, so that its listeners outlive the closing: an EventSource cannot be opened again,
  // and the extension's own reconnect goes through an error.
  var HIDDEN_CLOSE = 3000, streams = [], closing = null;
  function Stream(url) {
    this.url = url;
    this.listeners = [];
    this.onerror = this.onopen = null;
    this.closed = this.asleep = this.waiting = false;
    this.open();
  }
  Stream.prototype.open = function () {
    var self = this, path = this.url.split("?")[0];
    document.querySelectorAll("[sse-connect]").forEach(function (element) {
      var url = element.getAttribute("sse-connect");
      if (url.split("?")[0] === path) { self.url = url; }
    });
    var source = this.source = new EventSource(this.url, { withCredentials: true });
    source.onerror = function () { self.lost(); };
    source.onopen = function (event) { if (self.onopen) { self.onopen(event); } };
    this.listeners.forEach(function (pair) { source.addEventListener(pair[0], pair[1]); });
  };
  // ---- reconnecting -------------------------------------------------------------------------
  // A stream that fails (the daemon restarting or stopped; a new token refuses it) is closed
  // and waits: connection.js asks the daemon, with backoff, until it answers, then says
  // `gpuherd:online` and the stream opens again (from its sse-connect, as above). Before, the
  // browser's own retry every 3 s and the extension's each logged errors to the console for as
  // long as the daemon was away, and the extension's went on against a token refused.
  Stream.prototype.lost = function () {
    if (this.closed || this.asleep || this.waiting) { return; }
    this.waiting = true;
    this.source.close();
    document.dispatchEvent(new CustomEvent("gpuherd:streamdown"));
  };
  document.addEventListener("gpuherd:online", function () {
    streams.forEach(function (stream) {
      if (!stream.waiting || stream.closed) { return; }
      stream.waiting = false;
      if (document.visibilityState === "hidden") {
        stream.asleep = true;  // (opened when the tab is shown)
      } else {
        stream.open();
      }
    });
  });
  Stream.prototype.addEventListener = function (type, listener) {
    this.listeners.push([type, listener]);
    this.source.addEventListener(type, listener);
  };
  Stream.prototype.removeEventListener = function (type, listener) {
    this.listeners = this.listeners.filter(function (pair) {
      return pair[0] !== type || pair[1] !== listener;
    });
    this.source.removeEventListener(type, listener);
  };
  Stream.prototype.close = function () {
    this.closed = true;
    this.source.close();
  };
  Object.defineProperty(Stream.prototype, "readyState", {
    get: function () { return this.source.readyState; },
  });
  if (window.htmx) {
    htmx.createEventSource = function (url) {
      var stream = new Stream(url);
      streams.push(stream);
      return stream;
    };
  }
  document.addEventListener("visibilitychange", function () {
    clearTimeout(closing);
    streams = streams.filter(function (stream) {
      var kept = stream.asleep || stream.waiting || stream.readyState !== EventSource.CLOSED;
      return !stream.closed && kept;
    });
    if (document.visibilityState === "hidden") {
      closing = setTimeout(function () {
        streams.forEach(function (stream) {
          stream.asleep = true;
          stream.source.close();
        });
      }, HIDDEN_CLOSE);
    } else {
      streams.forEach(function (stream) {
        if (stream.asleep) {
          stream.asleep = false;
          stream.open();
        }
      });
    }
  });
})();
