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
    // kube's objections to the document under the YAML (none: a line saying kube-scheduler would start with it)
    const yamlCheck = document.getElementById("yaml-check");
    function showProblems(problems) {
      yamlCheck.replaceChildren(...problems.map(text => {
        const line = document.createElement("span");
        line.className = "field-error";
        line.textContent = text;
        return line;
      }));
      if (!problems.length) yamlCheck.textContent = "kube-scheduler would start with this document.";
      yamlCheck.classList.toggle("bad", problems.length > 0);
      yamlCheck.classList.toggle("good", problems.length === 0);
    }
    async function convert(from) {
      const data = new FormData(form);
      data.set("source", from);
      const resp = await fetch(form.dataset.convert, {method: "POST", body: data});
      return resp.ok ? resp.json() : {problems: [`the check failed (${resp.status} ${resp.statusText})`]};
    }
    // from "form": the document (YAML) and the form rebuilt from it; from "yaml": the form read from the YAML.
    // A document that does not parse stays where it is, its errors shown.
    async function sync(from, rebuildForm) {
      if (!form.dataset.convert) return true;   // read-only (a built-in profile, a viewer): nothing to convert
      const out = await convert(from);
      if (out.yaml === undefined) {
        showProblems(out.problems);
        if (from === "form") show("yaml");
        return false;
      }
      yamlBox.value = out.yaml;
      showProblems(out.problems);
      if (from === "yaml" || rebuildForm) { formView.innerHTML = out.html; baseDoc.value = out.base_doc; markAll(); }
      return true;
    }
    form.querySelectorAll(".tab").forEach(t => t.addEventListener("click", async () => {
      if (t.dataset.tab !== mode && await sync(mode, false)) show(t.dataset.tab);
    }));
    // live validation of the YAML as one types: checked half a second after the last key, the latest answer shown
    let typingTimer = null, asked = 0;
    yamlBox.addEventListener("input", () => {
      if (!form.dataset.convert) return;
      clearTimeout(typingTimer);
      typingTimer = setTimeout(async () => {
        const mine = ++asked;
        const out = await convert("yaml");
        if (mine === asked) showProblems(out.problems);
      }, 500);
    });
    // the list of errors at the top: a click shows the field (on the Form tab) or the YAML
    function reveal(id) {
      const field = document.getElementById(id);
      if (!field) return;
      show(formView.contains(field) ? "form" : "yaml");
      field.scrollIntoView({block: "center"});
      field.focus({preventScroll: true});
    }
    const banner = document.getElementById("form-errors");
    if (banner) banner.addEventListener("click", e => {
      const link = e.target.closest("a.to-field");
      if (link) { e.preventDefault(); reveal(link.dataset.field); }
    });

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
    // a new profile: the form rebuilt with its panel, which is then shown
    formView.addEventListener("click", async e => {
      if (!e.target.closest("#add-profile-button")) return;
      const name = formView.querySelector('input[name="new_profile"]');
      if (!name.value.trim()) { name.focus(); return; }
      const count = formView.querySelectorAll("section.profile").length;
      if (await sync("form", true)) {
        const added = formView.querySelectorAll("section.profile")[count];
        if (added) added.scrollIntoView({block: "start"});
      }
    });
    formView.addEventListener("keydown", e => {   // Enter in the name adds the profile, it does not save
      if (e.key === "Enter" && e.target.matches('input[name="new_profile"]')) {
        e.preventDefault();
        formView.querySelector("#add-profile-button").click();
      }
    });
    markAll();   // a form sent back with errors shows the values sent
    show(source.value === "yaml" ? "yaml" : "form");
    // sent back with errors: the first one shown where it is (its field on the Form tab; the YAML tab shows them all)
    if (banner) {
      const first = mode === "form" && formView.querySelector(".has-error input, .has-error select, .has-error textarea");
      if (first) { first.scrollIntoView({block: "center"}); first.focus({preventScroll: true}); }
      else banner.focus();
    }
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
