// The object editor: line numbers beside the manifest, the lines the validator named marked, and a click on an
// error ("line N: ...") selects that line in the manifest.
(function () {
  "use strict";
  var area = document.querySelector("#object-editor textarea");
  if (!area) return;
  var gutter = document.createElement("pre");
  gutter.className = "gutter";
  gutter.setAttribute("aria-hidden", "true");
  area.parentNode.insertBefore(gutter, area);
  var bad = {};
  document.querySelectorAll("#editor-errors li").forEach(function (li) {
    var m = /^line (\d+):/.exec(li.textContent) || /line (\d+), column \d+:/.exec(li.textContent);
    if (!m) return;
    var line = +m[1];
    bad[line] = true;
    li.classList.add("at-line");
    li.title = "show line " + line;
    li.addEventListener("click", function () { select(line); });
  });

  function render() {
    var n = area.value.split("\n").length, out = [];
    for (var i = 1; i <= n; i++) out.push(bad[i] ? '<span class="bad">' + i + "</span>" : String(i));
    gutter.innerHTML = out.join("\n");
    gutter.scrollTop = area.scrollTop;
  }

  function select(line) {
    var lines = area.value.split("\n"), start = 0;
    for (var i = 0; i < line - 1 && i < lines.length; i++) start += lines[i].length + 1;
    area.focus();
    area.setSelectionRange(start, start + (lines[line - 1] || "").length);
    var height = area.scrollHeight / Math.max(lines.length, 1);
    area.scrollTop = Math.max(0, (line - 5) * height);
  }

  area.addEventListener("input", render);
  area.addEventListener("scroll", function () { gutter.scrollTop = area.scrollTop; });
  render();
})();
