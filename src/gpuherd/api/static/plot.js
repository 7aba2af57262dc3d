/* gpuherd dashboard: the dots of a big sweep plot. Past views_plot.LINKED dots the server
   draws them as one path per colour, their places, jobs and tooltips' words in the plot's
   data-dots (each dot its own link and tooltip: 1,500 dots were 6,000 elements, half the
   page's load time). Here the dot under the pointer gets its tooltip, and the plot's one link
   moves onto it, so that a click, a middle click or the status bar work as on the link a dot
   was. */
(function () {
  "use strict";

  var REACH = 7;  // a dot's radius and a little, in the plot's units: the link's circle
  var parsed = new WeakMap(), shown = null;

  // Each dot as [x, y, job, tooltip]. data-dots has each as [kind, y, job, the metric's
  // value], a kind being [x, the tooltip's words before the value, after it] (Scatter.data):
  // the words are shared by the dots of one x, colour and state.
  function dots(svg) {
    if (!parsed.has(svg)) {
      var data = JSON.parse(svg.getAttribute("data-dots"));
      parsed.set(svg, data.dots.map(function (dot) {
        var kind = data.kinds[dot[0]];
        var tip = kind[1] + dot[3] + kind[2] + (dot[2] ? ", job " + dot[2] + ")" : ")");
        return [kind[0], dot[1], dot[2], tip];
      }));
    }
    return parsed.get(svg);
  }

  // The dot nearest the pointer within REACH; of dots on one spot, the one drawn last (seen).
  function under(svg, event) {
    var matrix = svg.getScreenCTM();
    if (!matrix) { return null; }
    var at = new DOMPoint(event.clientX, event.clientY).matrixTransform(matrix.inverse());
    var found = null, nearest = REACH * REACH;
    dots(svg).forEach(function (dot) {
      var dx = dot[0] - at.x, dy = dot[1] - at.y;
      if (dx * dx + dy * dy <= nearest) { found = dot; nearest = dx * dx + dy * dy; }
    });
    return found;
  }

  function hide() {
    if (!shown) { return; }
    shown.querySelector(".pt-link").setAttribute("display", "none");
    var tip = shown.parentNode.querySelector(".plot-tip");
    if (tip) { tip.hidden = true; }
    shown = null;
  }

  function show(svg, dot, event) {
    var link = svg.querySelector(".pt-link"), mark = link.querySelector("circle");
    var tip = svg.parentNode.querySelector(".plot-tip");
    mark.setAttribute("cx", dot[0]);
    mark.setAttribute("cy", dot[1]);
    if (dot[2]) { link.setAttribute("href", "/jobs/" + dot[2]); } else { link.removeAttribute("href"); }
    link.removeAttribute("display");
    tip.textContent = dot[3];  // text, never HTML
    tip.hidden = false;
    // Beside the pointer, on the side where it fits in the plot's box.
    var box = svg.parentNode.getBoundingClientRect();
    var x = event.clientX - box.left + 12, y = event.clientY - box.top + 16;
    if (x + tip.offsetWidth > box.width) { x = Math.max(0, x - 24 - tip.offsetWidth); }
    tip.style.left = x + "px";
    tip.style.top = y + "px";
    shown = svg;
  }

  function plotOf(target) {
    return target && target.closest ? target.closest("svg.plot[data-dots]") : null;
  }

  // The pointer where it last was: a live refresh draws the plot again under a still pointer.
  var pointer = null;
  function follow(target, event) {
    var svg = plotOf(target), dot = svg && under(svg, event);
    if (dot) { show(svg, dot, event); } else { hide(); }
  }
  document.addEventListener("pointermove", function (event) {
    pointer = { clientX: event.clientX, clientY: event.clientY };
    follow(event.target, event);
  });
  document.addEventListener("pointerleave", function () { pointer = null; hide(); });
  // A tap (no pointer moved there first) or a click beside the link: the dot there, if any.
  document.addEventListener("click", function (event) {
    var svg = plotOf(event.target);
    if (!svg || event.target.closest(".pt-link")) { return; }
    var dot = under(svg, event);
    if (dot && dot[2]) { window.location.assign("/jobs/" + dot[2]); }
  });
  // A live refresh replaced the plot, its link and tooltip: shown again on the new one.
  document.addEventListener("htmx:afterSwap", function () {
    shown = null;
    if (pointer) { follow(document.elementFromPoint(pointer.clientX, pointer.clientY), pointer); }
  });
})();
