// Atrium Studio's own script: small conveniences on top of pages that work
// without it. No inline script anywhere (the Content-Security-Policy
// forbids it): behaviour hangs on data- attributes.
(function () {
  "use strict";
  // data-copy="#id": copies the text of #id (a key shown once).
  document.addEventListener("click", function (e) {
    var b = e.target.closest("[data-copy]");
    if (!b) return;
    var el = document.querySelector(b.getAttribute("data-copy"));
    if (!el || !navigator.clipboard) return;
    navigator.clipboard.writeText(el.textContent.trim()).then(function () {
      var was = b.textContent;
      b.textContent = "Copied";
      setTimeout(function () { b.textContent = was; }, 2000);
    });
  });
  // data-confirm="question": a destructive form asks first.
  document.addEventListener("submit", function (e) {
    var f = e.target.closest("form[data-confirm]");
    if (f && !window.confirm(f.getAttribute("data-confirm"))) e.preventDefault();
  }, true);
})();
