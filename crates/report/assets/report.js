// Hover values for the report's SVG charts, and a self-check the tests read.
// The charts are drawn by the server-side renderer; this only shows the
// data-tip text of the mark under the pointer (as text, never as HTML).
(function () {
  var tip = document.getElementById("tip");
  function show(event) {
    var mark = event.target.closest ? event.target.closest("[data-tip]") : null;
    if (!mark) { tip.hidden = true; return; }
    tip.textContent = mark.getAttribute("data-tip");
    tip.hidden = false;
    var x = event.clientX + 14, y = event.clientY + 14;
    var w = tip.offsetWidth, h = tip.offsetHeight;
    if (x + w > window.innerWidth - 4) { x = event.clientX - w - 10; }
    if (y + h > window.innerHeight - 4) { y = event.clientY - h - 10; }
    tip.style.left = x + "px";
    tip.style.top = y + "px";
  }
  document.querySelectorAll("svg.chart").forEach(function (svg) {
    svg.addEventListener("mousemove", show);
    svg.addEventListener("mouseleave", function () { tip.hidden = true; });
  });

  // Self-check: every chart must contain drawn marks with a real size.
  var charts = document.querySelectorAll("svg.chart");
  var empty = [];
  charts.forEach(function (svg) {
    var marks = svg.querySelectorAll(".mark");
    var drawn = 0;
    marks.forEach(function (m) {
      var box = m.getBBox();
      if (box.width > 0 || box.height > 0) { drawn += 1; }
    });
    svg.setAttribute("data-drawn", String(drawn));
    // Where the chart is on the page, in CSS pixels, for screenshot checks.
    var r = svg.getBoundingClientRect();
    svg.setAttribute("data-rect", [r.left + window.scrollX, r.top + window.scrollY, r.width, r.height]
      .map(Math.round).join(","));
    var open = !svg.closest("details") || svg.closest("details").open;
    if (marks.length === 0 || (open && drawn === 0)) { empty.push(svg.id); }
  });
  var test = document.getElementById("selftest");
  // Hover check: a synthetic pointer move over the first mark shows its value.
  var first = document.querySelector("svg.chart [data-tip]");
  if (first) {
    first.dispatchEvent(new MouseEvent("mousemove", { bubbles: true, clientX: 20, clientY: 20 }));
    test.setAttribute("data-hover", tip.hidden ? "" : tip.textContent);
    tip.hidden = true;
  }
  test.setAttribute("data-charts", String(charts.length));
  test.setAttribute("data-empty-charts", empty.join(" "));
  test.setAttribute("data-js-errors", String(window.stampedeErrors.length));
  test.setAttribute("data-status", "done");
})();
