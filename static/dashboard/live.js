/* Live updates for the cluster pages: one websocket per page, reconnecting with backoff.
   Server messages: {kind: "hello", queue, rate, state} then {kind: "update", epoch, seq, queue, cycles, events, ...}.
   Resume: updates are numbered per broadcaster (epoch, seq); after a reconnect, a gap in seq or a new epoch
   the page refetches itself and swaps in its live regions ([data-resync] elements), so nothing is lost. */
(function () {
  "use strict";
  var cluster = document.body.dataset.cluster;
  if (!cluster) return;
  var dot = document.getElementById("live-dot");
  var rendered = Number(document.body.dataset.lastCycle || 0);   // the latest cycle this page shows
  var delay = 500, chart = null, latency = null, lastSeq = 0, epoch = null, opened = false, resyncs = 0, resyncing = null, again = false, sock = null;

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
    if (rate !== undefined) setText("rate", Number(rate).toFixed(1));
    var now = Date.now();
    if (chart) append(chart, now, [q.active || 0, q.backoff || 0, q.unschedulable || 0, rate || 0]);
    if (latency && q.p50 !== undefined) append(latency, now, [q.p50, q.p99]);
  }

  /* One point per dataset at time ``t`` (ms), keeping the latest 240. */
  function append(c, t, values) {
    c.data.datasets.forEach(function (d, i) {
      d.data.push({ x: t, y: values[i] });
      if (d.data.length > 240) d.data.shift();
    });
    c.update("none");
    window.schedscopeCharts.describe(c);
  }

  /* A time axis: points placed by their time, each tick labelled once, with seconds (tenths when ticks are closer). */
  function timeAxis() {
    return { type: "linear", ticks: { maxTicksLimit: 8, maxRotation: 0, callback: function (v, i, ticks) {
      var step = ticks.length > 1 ? ticks[1].value - ticks[0].value : 1000, d = new Date(v);
      var text = d.toLocaleTimeString([], { hour12: false, hour: "2-digit", minute: "2-digit", second: "2-digit" });
      return step < 1000 ? text + "." + Math.floor(d.getMilliseconds() / 100) : text;
    } } };
  }
  var timeTooltip = { callbacks: { title: function (items) {
    return items.length ? new Date(items[0].parsed.x).toLocaleTimeString([], { hour12: false }) : "";
  } } };
  function series(seed, key) {
    return seed.map(function (s) { return { x: Date.parse(s.t), y: s[key] }; });
  }

  /* Whether the user is typing in a field of ``el`` (a swap would take the field away). */
  function typing(el) {
    var a = document.activeElement;
    return !!a && a !== document.body && el.contains(a) && /^(INPUT|SELECT|TEXTAREA)$/.test(a.tagName);
  }

  /* Refetch this page and swap in its live regions (after a reconnect or a gap in the update stream). */
  function resync() {
    if (resyncing) { again = true; return resyncing; }   // what changed meanwhile may be after its snapshot
    resyncs += 1;
    resyncing = fetch(location.href, { credentials: "same-origin", headers: { "X-Resync": "1" } })
      .then(function (r) { return r.ok ? r.text() : null; })
      .then(function (html) {
        if (!html) return;
        var doc = new DOMParser().parseFromString(html, "text/html");
        var table = document.getElementById("pending-table"), before = table ? pendingRows(table) : null;
        document.querySelectorAll("[data-resync]").forEach(function (el) {
          var fresh = el.id && doc.getElementById(el.id);
          if (!fresh) return;
          if (typing(el)) {   // not under the user's cursor: once they leave the field
            el.addEventListener("focusout", function () { setTimeout(resync, 0); }, { once: true });
            return;
          }
          el.innerHTML = fresh.innerHTML;
          window.schedscopeClock.localize(el);
        });
        if (table) markPendingRows(table, before);
      })
      .catch(function () { /* the next reconnect or gap tries again */ })
      .then(function () {
        resyncing = null;
        if (again) { again = false; resync(); }
      });
    return resyncing;
  }

  /* Pending pods page: its count, groups, rows and pager are one response, refetched (at most once a second) after
     each update, so a new pod arrives complete and where the active sort and page put it, and they always agree. */
  var pendingTimer = null, pendingLast = 0;
  function updatePending() {
    if (!document.getElementById("pending-table") || pendingTimer) return;
    pendingTimer = setTimeout(function () {
      pendingTimer = null; pendingLast = Date.now(); resync();
    }, Math.max(0, pendingLast + 1000 - Date.now()));
  }

  /* Before a swap: what the pending table shows (attempts per pod, open messages); after it: the same messages open,
     new or retried pods marked fresh. */
  function pendingRows(table) {
    var rows = {};
    table.querySelectorAll("tr[data-pod]").forEach(function (tr) {
      var d = tr.querySelector("details");
      rows[tr.dataset.pod] = { attempts: tr.dataset.attempts, open: !!(d && d.open) };
    });
    return rows;
  }

  function markPendingRows(table, before) {
    table.querySelectorAll("tr[data-pod]").forEach(function (tr) {
      var was = before[tr.dataset.pod], d = tr.querySelector("details");
      if (!was || was.attempts !== tr.dataset.attempts) tr.classList.add("fresh");
      if (was && was.open && d) d.open = true;
    });
  }

  function podLink(key) {
    var parts = key.split("/");
    return "/clusters/" + cluster + "/pods/" + encodeURIComponent(parts[0]) + "/" + encodeURIComponent(parts[1]) + "/";
  }

  /* New events on top of the list, as the server renders its rows (the node as a chip); an event the list already
     shows (rendered after it was sent, or a later count of its series) replaces its row. */
  function addEvents(events) {
    var list = document.getElementById("event-list");
    if (!list || !events || !events.length) return;
    events.forEach(function (e) {
      Array.prototype.slice.call(list.children).forEach(function (old) {
        if ((e.key && old.dataset.event === e.key) || (!old.dataset.event && old.classList.contains("muted"))) list.removeChild(old);
      });
      var li = document.createElement("li");
      li.className = "fresh ev-" + (e.type || "normal").toLowerCase();
      if (e.key) li.dataset.event = e.key;
      var t = document.createElement("span"); t.className = "t"; t.appendChild(window.schedscopeClock.element(e.time));
      var b = document.createElement("b"); b.textContent = e.reason;
      li.appendChild(t); li.appendChild(document.createTextNode(" ")); li.appendChild(b); li.appendChild(document.createTextNode(" "));
      if (e.pod) { var a = document.createElement("a"); a.href = podLink(e.pod); a.textContent = e.pod; li.appendChild(a); li.appendChild(document.createTextNode(" ")); }
      if (e.node) { var n = document.createElement("span"); n.className = "chip"; n.textContent = e.node; li.appendChild(n); li.appendChild(document.createTextNode(" ")); }
      var m = document.createElement("span"); m.className = "msg"; m.textContent = e.message; li.appendChild(m);
      list.insertBefore(li, list.firstChild);
    });
    while (list.children.length > 30) list.removeChild(list.lastChild);
  }

  /* Pod page: a cycle or an event of this pod (or an update that dropped some of its items: a burst) refetches the
     page's live regions (status and binding, attempts, events, the decision trace), so they are the server's. */
  function updatePodPage(msg) {
    var info = document.getElementById("pod-info");
    if (!info) return;
    var key = info.dataset.pod;
    var mine = (msg.cycles || []).some(function (c) { return c.pod === key; })
      || (msg.events || []).some(function (e) { return e.pod === key; });
    var dropped = (msg.new_cycles || 0) > (msg.cycles || []).length || (msg.new_events || 0) > (msg.events || []).length;
    if (mine || (dropped && !document.getElementById("pod-bound"))) resync();
  }

  function initLatency(seed) {
    var canvas = document.getElementById("latency-chart");
    if (!canvas || !window.Chart) return;
    latency = new window.Chart(canvas, {
      type: "line",
      data: {
        datasets: [
          { label: "p50 ms", data: series(seed, "p50"), borderColor: "#2f6fde", pointRadius: 0, tension: .2 },
          { label: "p99 ms", data: series(seed, "p99"), borderColor: "#c9372c", pointRadius: 0, tension: .2 }
        ]
      },
      options: { animation: false, maintainAspectRatio: false, interaction: { mode: "index", intersect: false },
                 scales: { x: timeAxis(), y: { beginAtZero: true, title: { display: true, text: "ms" } } },
                 plugins: { legend: { position: "bottom", labels: { boxWidth: 12 } }, tooltip: timeTooltip } }
    });
    window.schedscopeCharts.describe(latency);
  }

  function initChart() {
    var canvas = document.getElementById("queue-chart");
    if (!canvas || !window.Chart) return;
    var seed = [];
    var data = document.getElementById("snapshot-data");
    if (data) { try { seed = JSON.parse(data.textContent) || []; } catch (e) { seed = []; } }
    initLatency(seed);
    chart = new window.Chart(canvas, {
      type: "line",
      data: {
        datasets: [
          { label: "activeQ", data: series(seed, "active"), borderColor: "#2f6fde", pointRadius: 0, tension: .2 },
          { label: "backoffQ", data: series(seed, "backoff"), borderColor: "#d69e2e", pointRadius: 0, tension: .2 },
          { label: "unschedulable", data: series(seed, "unschedulable"), borderColor: "#c9372c", pointRadius: 0, tension: .2 },
          { label: "cycles/s", data: series(seed, "rate"), borderColor: "#1f9d55", borderDash: [4, 3], pointRadius: 0, yAxisID: "y1", tension: .2 }
        ]
      },
      options: {
        animation: false, maintainAspectRatio: false, interaction: { mode: "index", intersect: false },
        scales: { x: timeAxis(), y: { beginAtZero: true, title: { display: true, text: "pods" } },
                  y1: { beginAtZero: true, position: "right", grid: { drawOnChartArea: false }, title: { display: true, text: "cycles/s" } } },
        plugins: { legend: { position: "bottom", labels: { boxWidth: 12 } }, tooltip: timeTooltip }
      }
    });
    window.schedscopeCharts.describe(chart);
  }

  function connect() {
    var proto = location.protocol === "https:" ? "wss://" : "ws://";
    var ws = sock = new WebSocket(proto + location.host + "/ws/clusters/" + cluster + "/");
    ws.onopen = function () {
      delay = 500; setLive(true);
      if (opened) resync();   // whatever happened while we were away
      opened = true;
    };
    ws.onmessage = function (ev) {
      var msg = JSON.parse(ev.data);
      if (msg.kind === "hello") {
        applyQueue(msg.queue, msg.rate);
        // cycles committed after the page was rendered and before this socket joined the stream
        if (!resyncs && (msg.last_cycle || 0) > rendered) resync();
      } else if (msg.kind === "update") {
        var gap = epoch !== null && (msg.epoch !== epoch || msg.seq !== lastSeq + 1);
        epoch = msg.epoch; lastSeq = msg.seq;
        if (msg.queue) applyQueue(msg.queue, msg.queue.rate);
        if (gap) { resync(); return; }
        addEvents(msg.events);
        updatePodPage(msg);
        updatePending();
        document.dispatchEvent(new CustomEvent("schedscope:update", { detail: msg }));   // the event timeline
      }
    };
    ws.onclose = function () {
      setLive(false);
      setTimeout(connect, delay);
      delay = Math.min(delay * 2, 5000);   // at most 5 s between tries: back within seconds of an outage's end
    };
  }

  initChart();
  connect();
  window.schedscopeLive = { lastSeq: function () { return lastSeq; }, resyncs: function () { return resyncs; },
                           resync: resync, drop: function () { if (sock) sock.close(); } };
})();
