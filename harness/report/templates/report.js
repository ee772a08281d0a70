(function () {
  "use strict";
  // Count the attempt marks the browser actually laid out (tests read these attributes).
  var total = 0;
  document.querySelectorAll("svg.timeline").forEach(function (svg) {
    var n = 0;
    svg.querySelectorAll(".attempt").forEach(function (mark) {
      var box = mark.getBBox();
      if (box.width > 0 && box.height > 0) { n += 1; }
    });
    svg.setAttribute("data-rendered-marks", String(n));
    total += n;
  });
  document.body.setAttribute("data-rendered-marks", String(total));

  // Filters: by controller, failing only, and text.
  var controller = document.getElementById("f-controller");
  var failing = document.getElementById("f-failing");
  var text = document.getElementById("f-text");
  var count = document.getElementById("f-count");
  var items = document.querySelectorAll(".filterable");
  function apply() {
    var c = controller.value, f = failing.checked, t = text.value.trim().toLowerCase();
    var shown = 0;
    items.forEach(function (el) {
      var ok = (!c || el.dataset.controller === c) &&
        (!f || el.dataset.failing === "true") &&
        (!t || el.dataset.text.indexOf(t) !== -1);
      el.hidden = !ok;
      if (ok) { shown += 1; }
    });
    count.textContent = (c || f || t) ? shown + " of " + items.length + " rows and runs shown" : "";
  }
  [controller, failing, text].forEach(function (el) { el.addEventListener("input", apply); });
  document.querySelector("form.filters").addEventListener("submit", function (e) { e.preventDefault(); });
})();
