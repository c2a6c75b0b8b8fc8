// Runs first: records any JavaScript error on the page so it is visible to the
// reader (a banner) and to tests (data-js-errors on #selftest).
window.stampedeErrors = [];
window.onerror = function (message, source, line) {
  window.stampedeErrors.push(String(message) + " (line " + line + ")");
  var box = document.getElementById("js-errors");
  if (box) { box.hidden = false; box.textContent = "Script error: " + window.stampedeErrors.join("; "); }
  var test = document.getElementById("selftest");
  if (test) { test.setAttribute("data-js-errors", String(window.stampedeErrors.length)); }
};
