// Profile editor: Form/YAML tabs kept in sync through the server (convert/), switches and weights marked where
// they differ from kube's default, ↑ ↓ reordering, a plugin added from the registered ones; the dry-run progress
// bar. Without JavaScript both views are shown and each has its own Save button.
(function () {
  "use strict";
  // Apply changes what running schedulers run: asked first (without JavaScript, the button applies at once)
  document.querySelectorAll("form.apply-form[data-confirm]").forEach(f => {
    f.addEventListener("submit", e => { if (!window.confirm(f.dataset.confirm)) e.preventDefault(); });
  });
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
    // from "form": the document (YAML) and the form rebuilt from it; from "yaml": the form read from the YAML
    async function sync(from, rebuildForm) {
      if (!form.dataset.convert) return true;   // the built-in profile: nothing to convert
      const data = new FormData(form);
      data.set("source", from);
      const resp = await fetch(form.dataset.convert, {method: "POST", body: data});
      const out = await resp.json();
      if (!resp.ok) { alert(Object.values(out.errors || {}).flat().join("\n") || "cannot convert"); return false; }
      yamlBox.value = out.yaml;
      if (from === "yaml" || rebuildForm) { formView.innerHTML = out.html; baseDoc.value = out.base_doc; markAll(); }
      return true;
    }
    form.querySelectorAll(".tab").forEach(t => t.addEventListener("click", async () => {
      if (t.dataset.tab !== mode && await sync(mode, false)) show(t.dataset.tab);
    }));

    function mark(tr) {
      const on = tr.querySelector("input.switch").checked;
      const weight = tr.querySelector('input[name$=".weight"]');
      const dflt = tr.dataset.defaultWeight;
      let changed = on !== (tr.dataset.defaultOn === "1");
      if (weight && on && dflt !== "" && weight.value !== "" && Number(weight.value) !== Number(dflt)) changed = true;
      tr.classList.toggle("off", !on);
      tr.classList.toggle("changed", changed);
      if (weight) {
        const notes = tr.closest(".points-layout").dataset;
        const w = weight.value === "" ? null : Number(weight.value);
        tr.querySelector(".note").textContent = w === 0 ? notes.zeroNote : (w !== null && w < 0 ? notes.negativeNote : "");
      }
      const point = tr.closest(".point");
      point.classList.toggle("changed", point.querySelector("tr.changed") !== null
                                        || point.querySelector(".chip.warn") !== null);
    }
    function markAll() { formView.querySelectorAll(".point tr[data-plugin]").forEach(mark); }
    function move(tr, dir) {
      let other = dir < 0 ? tr.previousElementSibling : tr.nextElementSibling;
      while (other && !other.dataset.plugin) other = dir < 0 ? other.previousElementSibling : other.nextElementSibling;
      if (!other) return;
      if (dir < 0) tr.parentNode.insertBefore(tr, other); else tr.parentNode.insertBefore(other, tr);
      tr.parentNode.querySelectorAll("tr[data-plugin]").forEach((row, k) => { row.querySelector('input[name$=".pos"]').value = k + 1; });
      const point = tr.closest(".point");
      point.querySelector('input[name$=".moved"]').value = "True";
      point.classList.add("changed");
    }
    formView.addEventListener("click", e => {
      const b = e.target.closest("button.move");
      if (b) move(b.closest("tr"), Number(b.dataset.move));
    });
    formView.addEventListener("input", e => {
      const tr = e.target.closest(".point tr[data-plugin]");
      if (tr) mark(tr);
    });
    formView.addEventListener("change", e => {
      if (e.target.matches('select[name$=".add"]') && e.target.value) sync("form", true);
    });
    markAll();   // a form sent back with errors shows the values sent
    show(source.value === "yaml" ? "yaml" : "form");
  }

  const progress = document.getElementById("progress");
  if (progress && !["done", "failed"].includes(progress.dataset.state)) {
    const bar = progress.querySelector("progress");
    const text = document.getElementById("progress-text");
    const timer = setInterval(async () => {
      const s = await (await fetch(progress.dataset.status)).json();
      bar.value = s.percent;
      text.textContent = `${s.state} · ${s.done} of ${s.total} placements`;
      if (s.state === "done" || s.state === "failed") { clearInterval(timer); location.reload(); }
    }, 500);
  }
})();
