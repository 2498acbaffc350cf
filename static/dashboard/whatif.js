// What-if run page: follows the run's progress (its status URL, twice a second) and shows the answer once done.
(function () {
  const box = document.getElementById("whatif-progress");
  if (!box || ["done", "failed"].includes(box.dataset.state)) return;
  const bar = box.querySelector("progress");
  const stage = document.getElementById("whatif-stage");
  async function poll() {
    try {
      const s = await (await fetch(box.dataset.status, {headers: {Accept: "application/json"}})).json();
      bar.value = s.percent;
      stage.textContent = s.state === "running" && s.stage ? `running: ${s.stage}` : s.state;
      if (s.state === "done" || s.state === "failed") {
        window.location.reload();
        return;
      }
    } catch (err) {
      stage.textContent = `waiting for the server (${err.message})`;
    }
    setTimeout(poll, 500);
  }
  poll();
})();
