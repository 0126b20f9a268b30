// The asset library's drop zone: a file dropped on [data-drop-zone] is put
// in its form's file input and the form is sent, as choosing the file and
// pressing Upload would (the form works without this script).
(function () {
  "use strict";
  function zoneOf(e) { return e.target instanceof Element ? e.target.closest("[data-drop-zone]") : null; }
  function hasFiles(e) { return e.dataTransfer && Array.prototype.indexOf.call(e.dataTransfer.types || [], "Files") >= 0; }
  ["dragenter", "dragover"].forEach(function (type) {
    document.addEventListener(type, function (e) {
      var zone = zoneOf(e);
      if (!zone || !hasFiles(e)) return;
      e.preventDefault();
      e.dataTransfer.dropEffect = "copy";
      zone.classList.add("dragging");
    });
  });
  document.addEventListener("dragleave", function (e) {
    var zone = zoneOf(e);
    if (zone && !zone.contains(e.relatedTarget)) zone.classList.remove("dragging");
  });
  document.addEventListener("drop", function (e) {
    var zone = zoneOf(e);
    if (!zone) return;
    e.preventDefault();
    zone.classList.remove("dragging");
    var files = e.dataTransfer && e.dataTransfer.files;
    var form = zone.closest("form");
    var input = form && form.querySelector("input[type=file]");
    if (!files || files.length === 0 || !input) return;
    // One file per upload, as the API takes.
    var dt = new DataTransfer();
    dt.items.add(files[0]);
    input.files = dt.files;
    form.requestSubmit();
  });
})();
