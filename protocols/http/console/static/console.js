// Wharf console: asks before the destructive actions (forms with
// data-confirm). Everything else works without script.
document.addEventListener("submit", function (ev) {
  var f = ev.target;
  var q = f.getAttribute && f.getAttribute("data-confirm");
  if (q && !window.confirm(q)) {
    ev.preventDefault();
  }
});
