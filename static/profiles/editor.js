// Profile editor: Form/YAML tabs kept in sync through the server (convert/), row reordering, and the
// dry-run progress bar. Without JavaScript both views are shown and each has its own Save button.
(function () {
  "use strict";
  const form = document.getElementById("profile-form");
  if (form) {
    const formView = document.getElementById("form-view");
    const yamlView = document.getElementById("yaml-view");
    const source = form.querySelector('input[name="source"]');
    const yamlBox = form.querySelector('textarea[name="yaml"]');
    const baseDoc = form.querySelector('input[name="base_doc"]');
    let mode = "form";
    function show(m) {
      mode = m;
      formView.hidden = m !== "form";
      yamlView.hidden = m !== "yaml";
      source.value = m;
      form.querySelectorAll(".tab").forEach(t => t.classList.toggle("active", t.dataset.tab === m));
      form.querySelectorAll("#save-form,#save-yaml").forEach(b => { b.hidden = b.value !== m; });
    }
    async function sync(from) {
      const data = new FormData(form);
      data.set("source", from);
      const resp = await fetch(form.dataset.convert, {method: "POST", body: data});
      const out = await resp.json();
      if (!resp.ok) { alert(Object.values(out.errors || {}).flat().join("\n") || "cannot convert"); return false; }
      if (from === "form") yamlBox.value = out.yaml;
      else { formView.innerHTML = out.html; baseDoc.value = out.base_doc; addMovers(); }
      return true;
    }
    form.querySelectorAll(".tab").forEach(t => t.addEventListener("click", async () => {
      if (t.dataset.tab !== mode && await sync(mode)) show(t.dataset.tab);
    }));
    function addMovers() {
      formView.querySelectorAll(".group.plugins tbody tr").forEach(tr => {
        if (tr.querySelector(".mover")) return;
        const td = document.createElement("td");
        td.className = "mover";
        for (const [label, dir] of [["↑", -1], ["↓", 1]]) {
          const b = document.createElement("button");
          b.type = "button"; b.textContent = label; b.title = dir < 0 ? "run earlier" : "run later";
          b.addEventListener("click", () => move(tr, dir));
          td.appendChild(b);
        }
        tr.appendChild(td);
      });
    }
    function move(tr, dir) {
      const other = dir < 0 ? tr.previousElementSibling : tr.nextElementSibling;
      if (!other) return;
      if (dir < 0) tr.parentNode.insertBefore(tr, other); else tr.parentNode.insertBefore(other, tr);
      let n = 1;
      tr.parentNode.querySelectorAll("tr").forEach(row => {
        const name = row.querySelector('input[name$=".name"]');
        const pos = row.querySelector('input[name$=".pos"]');
        if (pos) pos.value = name && name.value.trim() ? n++ : "";
      });
    }
    addMovers();
    show(source.value === "yaml" ? "yaml" : "form");
  }

  const progress = document.getElementById("progress");
  if (progress && !["done", "failed"].includes(progress.dataset.state)) {
    const bar = progress.querySelector("progress");
    const text = document.getElementById("progress-text");
    const timer = setInterval(async () => {
      const s = await (await fetch(progress.dataset.status)).json();
      bar.value = s.percent;
      text.textContent = `${s.state} ${s.done}/${s.total}`;
      if (s.state === "done" || s.state === "failed") { clearInterval(timer); location.reload(); }
    }, 500);
  }
})();
