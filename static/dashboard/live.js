/* Live updates for the cluster pages: one websocket per page, reconnecting with backoff.
   Server messages: {kind: "hello", queue, rate, state} then {kind: "update", seq, queue, cycles, events, ...}. */
(function () {
  "use strict";
  var cluster = document.body.dataset.cluster;
  if (!cluster) return;
  var dot = document.getElementById("live-dot");
  var delay = 500, chart = null, lastSeq = 0;

  function setLive(on) {
    if (!dot) return;
    dot.textContent = on ? "live" : "offline";
    dot.classList.toggle("on", on);
  }

  function setText(path, value) {
    document.querySelectorAll('[data-live="' + path + '"]').forEach(function (el) {
      if (el.textContent !== String(value)) el.textContent = value;
    });
  }

  function applyQueue(q, rate) {
    if (!q) return;
    ["active", "backoff", "unschedulable", "gated", "bound"].forEach(function (k) {
      if (q[k] !== undefined) setText("queue." + k, q[k]);
    });
    setText("pending", (q.active || 0) + (q.backoff || 0) + (q.unschedulable || 0) + (q.gated || 0));
    if (rate !== undefined) setText("rate", Number(rate).toFixed(1));
    if (chart) {
      var now = new Date().toLocaleTimeString();
      chart.data.labels.push(now);
      chart.data.datasets[0].data.push(q.active || 0);
      chart.data.datasets[1].data.push(q.backoff || 0);
      chart.data.datasets[2].data.push(q.unschedulable || 0);
      chart.data.datasets[3].data.push(rate || 0);
      if (chart.data.labels.length > 240) {
        chart.data.labels.shift();
        chart.data.datasets.forEach(function (d) { d.data.shift(); });
      }
      chart.update("none");
    }
  }

  function podLink(key) {
    var parts = key.split("/");
    return "/clusters/" + cluster + "/pods/" + encodeURIComponent(parts[0]) + "/" + encodeURIComponent(parts[1]) + "/";
  }

  function addEvents(events) {
    var list = document.getElementById("event-list");
    if (!list || !events || !events.length) return;
    events.forEach(function (e) {
      var li = document.createElement("li");
      li.className = "fresh ev-" + (e.type || "normal").toLowerCase();
      var t = document.createElement("span"); t.className = "t"; t.textContent = new Date(e.time).toLocaleTimeString();
      var b = document.createElement("b"); b.textContent = e.reason;
      li.appendChild(t); li.appendChild(document.createTextNode(" ")); li.appendChild(b); li.appendChild(document.createTextNode(" "));
      if (e.pod) { var a = document.createElement("a"); a.href = podLink(e.pod); a.textContent = e.pod; li.appendChild(a); li.appendChild(document.createTextNode(" ")); }
      var m = document.createElement("span"); m.className = "msg"; m.textContent = e.message; li.appendChild(m);
      list.insertBefore(li, list.firstChild);
    });
    while (list.children.length > 30) list.removeChild(list.lastChild);
  }

  function notifyPodPage(cycles) {
    var att = document.getElementById("attempts");
    if (!att || !cycles) return;
    var key = (document.querySelector("h1 .mono") || {}).textContent;
    cycles.forEach(function (c) {
      if (c.pod !== key) return;
      var li = document.createElement("li");
      li.className = "fresh r-" + c.result;
      var a = document.createElement("a"); a.href = "?cycle=" + c.seq;
      a.textContent = "#" + c.attempt + " new " + c.result + (c.node ? " → " + c.node : "");
      li.appendChild(a);
      att.insertBefore(li, att.firstChild);
      var q = document.getElementById("pod-queue");
      if (q && c.result === "scheduled") { q.textContent = "bound to " + c.node; q.className = "q q-bound"; }
    });
  }

  function initChart() {
    var canvas = document.getElementById("queue-chart");
    if (!canvas || !window.Chart) return;
    var seed = [];
    var data = document.getElementById("snapshot-data");
    if (data) { try { seed = JSON.parse(data.textContent) || []; } catch (e) { seed = []; } }
    chart = new window.Chart(canvas, {
      type: "line",
      data: {
        labels: seed.map(function (s) { return new Date(s.t).toLocaleTimeString(); }),
        datasets: [
          { label: "activeQ", data: seed.map(function (s) { return s.active; }), borderColor: "#2f6fde", pointRadius: 0, tension: .2 },
          { label: "backoffQ", data: seed.map(function (s) { return s.backoff; }), borderColor: "#d69e2e", pointRadius: 0, tension: .2 },
          { label: "unschedulable", data: seed.map(function (s) { return s.unschedulable; }), borderColor: "#c9372c", pointRadius: 0, tension: .2 },
          { label: "cycles/s", data: seed.map(function (s) { return s.rate; }), borderColor: "#1f9d55", borderDash: [4, 3], pointRadius: 0, yAxisID: "y1", tension: .2 }
        ]
      },
      options: {
        animation: false, maintainAspectRatio: false, interaction: { mode: "index", intersect: false },
        scales: { x: { ticks: { maxTicksLimit: 8 } }, y: { beginAtZero: true, title: { display: true, text: "pods" } },
                  y1: { beginAtZero: true, position: "right", grid: { drawOnChartArea: false }, title: { display: true, text: "cycles/s" } } },
        plugins: { legend: { position: "bottom", labels: { boxWidth: 12 } } }
      }
    });
  }

  function connect() {
    var proto = location.protocol === "https:" ? "wss://" : "ws://";
    var ws = new WebSocket(proto + location.host + "/ws/clusters/" + cluster + "/");
    ws.onopen = function () { delay = 500; setLive(true); };
    ws.onmessage = function (ev) {
      var msg = JSON.parse(ev.data);
      if (msg.kind === "hello") {
        applyQueue(msg.queue, msg.rate);
      } else if (msg.kind === "update") {
        lastSeq = msg.seq;
        if (msg.queue) applyQueue(msg.queue, msg.queue.rate);
        addEvents(msg.events);
        notifyPodPage(msg.cycles);
      }
    };
    ws.onclose = function () {
      setLive(false);
      setTimeout(connect, delay);
      delay = Math.min(delay * 2, 15000);
    };
  }

  initChart();
  connect();
  window.schedscopeLive = { lastSeq: function () { return lastSeq; } };
})();
