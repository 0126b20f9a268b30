// The item editor's conveniences, on top of a form that works without
// them: a toolbar for rich text fields (it inserts HTML), an asset field
// that takes a dropped file (uploaded to the site's asset library, then
// chosen), and a reference search box that never submits the item's form.
(function () {
  "use strict";

  // ---- rich text toolbar
  function wrap(ta, before, after, placeholder) {
    var s = ta.selectionStart, e = ta.selectionEnd, v = ta.value;
    var sel = v.slice(s, e) || placeholder;
    ta.value = v.slice(0, s) + before + sel + after + v.slice(e);
    ta.selectionStart = s + before.length;
    ta.selectionEnd = s + before.length + sel.length;
    ta.focus();
    ta.dispatchEvent(new Event("input", { bubbles: true }));
  }
  function escapeAttr(s) {
    return s.replace(/&/g, "&amp;").replace(/"/g, "&quot;").replace(/</g, "&lt;");
  }
  function listOf(tag, text) {
    var lines = (text || "Item").split(/\n/).filter(function (l) { return l.trim() !== ""; });
    return "<" + tag + ">\n" + lines.map(function (l) { return "  <li>" + l + "</li>"; }).join("\n") + "\n</" + tag + ">";
  }
  var tools = [
    ["Heading 2", function (ta) { wrap(ta, "<h2>", "</h2>", "Heading"); }],
    ["Heading 3", function (ta) { wrap(ta, "<h3>", "</h3>", "Heading"); }],
    ["Bulleted list", function (ta) { replaceSel(ta, function (t) { return listOf("ul", t); }); }],
    ["Numbered list", function (ta) { replaceSel(ta, function (t) { return listOf("ol", t); }); }],
    ["Link", function (ta) {
      var url = window.prompt("Address of the link (https://…)", "https://");
      if (!url) return;
      wrap(ta, '<a href="' + escapeAttr(url) + '">', "</a>", "link text");
    }],
    ["Image", function (ta) {
      var url = window.prompt("Address of the image (an asset's URL from the asset library)", "");
      if (!url) return;
      var alt = window.prompt("Describe the image for people who cannot see it", "") || "";
      replaceSel(ta, function () { return '<img src="' + escapeAttr(url) + '" alt="' + escapeAttr(alt) + '">'; });
    }]
  ];
  function replaceSel(ta, fn) {
    var s = ta.selectionStart, e = ta.selectionEnd, v = ta.value;
    var out = fn(v.slice(s, e));
    ta.value = v.slice(0, s) + out + v.slice(e);
    ta.selectionStart = ta.selectionEnd = s + out.length;
    ta.focus();
  }
  function toolbar(ta) {
    var bar = document.createElement("div");
    bar.className = "rt-toolbar";
    bar.setAttribute("role", "toolbar");
    var label = document.querySelector("label[for='" + ta.id + "']");
    bar.setAttribute("aria-label", "Insert into " + (label ? label.textContent.trim() : "the text"));
    tools.forEach(function (t) {
      var b = document.createElement("button");
      b.type = "button";
      b.className = "secondary";
      b.textContent = t[0];
      b.addEventListener("click", function () { t[1](ta); });
      bar.appendChild(b);
    });
    ta.parentNode.insertBefore(bar, ta);
  }

  // ---- asset drop zone
  function dropZone(box) {
    var status = box.querySelector(".drop-status");
    if (!status) return;
    box.addEventListener("dragover", function (e) { e.preventDefault(); box.classList.add("dragging"); });
    box.addEventListener("dragleave", function () { box.classList.remove("dragging"); });
    box.addEventListener("drop", function (e) {
      e.preventDefault();
      box.classList.remove("dragging");
      var file = e.dataTransfer && e.dataTransfer.files && e.dataTransfer.files[0];
      if (!file) return;
      var form = box.closest("form");
      var token = form && form.querySelector("input[name=csrf_token]");
      var body = new FormData();
      body.append("csrf_token", token ? token.value : "");
      body.append("file", file, file.name);
      // The library sends the upload back here with ?asset=<its id>.
      body.append("return_to", window.location.pathname);
      status.textContent = "Uploading " + file.name + "…";
      fetch(box.getAttribute("data-drop-url"), { method: "POST", body: body, credentials: "same-origin" })
        .then(function (r) {
          if (!r.ok) throw new Error("the upload answered " + r.status);
          var id = new URL(r.url).searchParams.get("asset");
          return r.text().then(function (html) { return { html: html, id: id }; });
        })
        .then(function (got) {
          var doc = new DOMParser().parseFromString(got.html, "text/html");
          var fresh = doc.getElementById(box.id);
          var list = fresh && fresh.querySelector(".assets");
          if (!list) throw new Error("the page did not list the assets");
          box.querySelector(".assets").replaceWith(list);
          var chosen = null;
          list.querySelectorAll("input[type=radio]").forEach(function (r) {
            if (got.id ? r.value === got.id : (!chosen && r.labels[0] && r.labels[0].textContent.indexOf(file.name) >= 0)) chosen = r;
          });
          if (chosen) chosen.checked = true;
          status.textContent = file.name + " is uploaded" + (chosen ? " and chosen." : ".") + " Save the item to keep it.";
        })
        .catch(function (err) {
          status.textContent = "The file could not be uploaded (" + err.message + "): use the asset library.";
        });
    });
  }

  function init(root) {
    root.querySelectorAll("textarea[data-richtext]").forEach(function (ta) {
      if (!ta.disabled && !ta.closest("fieldset[disabled]") && !ta.dataset.toolbar) { ta.dataset.toolbar = "1"; toolbar(ta); }
    });
    root.querySelectorAll(".asset-picker[data-drop-url]").forEach(dropZone);
  }
  // A reference's search box runs its search on Enter instead of saving
  // the item.
  document.addEventListener("keydown", function (e) {
    if (e.key === "Enter" && e.target.matches && e.target.matches(".field-reference input[type=search]")) e.preventDefault();
  });
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", function () { init(document); });
  else init(document);
})();
