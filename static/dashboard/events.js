/* The event timeline page: swimlanes of pods (vis-timeline) and the events histogram (Chart.js) over one window.
   The window is the URL's (window, until and the filters); ctrl + wheel or the zoom buttons zoom, a drag on the
   swimlanes pans (a plain wheel scrolls the page), a click on a histogram bar narrows it to the bar: the URL is
   updated, the timeline API is asked for that window (lanes and finer buckets) and the events list below is
   refetched. A window ending now follows the live stream
   (live.js's "schedscope:update" events): its open bars grow to the present and the data is refetched. Every
   time on this page is UTC, as the server's. */
(function () {
  "use strict";
  var box = document.getElementById("pod-timeline");
  var canvas = document.getElementById("event-chart");
  var seed = document.getElementById("event-chart-data");
  if (!box || !canvas || !window.vis || !window.Chart) return;

  var api = box.dataset.api, cluster = box.dataset.cluster;
  var REFETCH_MS = 2000, SETTLE_MS = 350, MIN_WINDOW_MS = 5000, MAX_WINDOW_MS = 10 * 366 * 86400000;
  var UNITS = [["d", 86400], ["h", 3600], ["m", 60]];
  var QUEUES = { active: "activeQ", backoff: "backoffQ", unschedulable: "unschedulablePods", gated: "gated" };
  var state = { windowMs: null, live: true, fetching: false, lastFetch: 0, settle: null, interacting: false };
  var items = new window.vis.DataSet(), groups = new window.vis.DataSet();
  var status = document.getElementById("timeline-status");

  function pad(n) { return (n < 10 ? "0" : "") + n; }
  function utc(d, withDate, withSeconds) {
    var t = pad(d.getUTCHours()) + ":" + pad(d.getUTCMinutes()) + (withSeconds ? ":" + pad(d.getUTCSeconds()) : "");
    return withDate ? pad(d.getUTCMonth() + 1) + "-" + pad(d.getUTCDate()) + " " + t : t;
  }
  function isoSeconds(d) { return d.toISOString().slice(0, 19); }   // what the until field and the URL carry
  function escapeHtml(s) {
    return String(s).replace(/[&<>"']/g, function (c) { return "&#" + c.charCodeAt(0) + ";"; });
  }
  function seconds(ms) { var s = ms / 1000; return s < 10 ? s.toFixed(1) + " s" : s < 120 ? Math.round(s) + " s" : (s / 60).toFixed(1) + " min"; }

  /* The shortest window text the server reads back (services.timewindow.format_window). */
  function formatWindow(ms) {
    var s = Math.max(1, Math.round(ms / 1000));
    for (var i = 0; i < UNITS.length; i++) if (s % UNITS[i][1] === 0) return s / UNITS[i][1] + UNITS[i][0];
    return s + "s";
  }

  function podLink(key) {
    var parts = key.split("/");
    return "/clusters/" + encodeURIComponent(cluster) + "/pods/" + encodeURIComponent(parts[0]) + "/" +
      encodeURIComponent(parts[1]) + "/";
  }

  /* A mark with a page to open is a link (keyboard: Tab reaches it, Enter opens it), named by its tooltip's text. */
  function markLink(item) {
    if (!item.href) return "";
    var a = document.createElement("a");
    a.href = item.href; a.className = "mark-link";
    a.setAttribute("aria-label", item.label);
    return a;
  }

  var timeline = new window.vis.Timeline(box, items, groups, {
    stack: false, orientation: "top", showCurrentTime: true, selectable: false, groupOrder: "order", zoomKey: "ctrlKey",
    zoomMin: MIN_WINDOW_MS, zoomMax: MAX_WINDOW_MS, maxHeight: 560, verticalScroll: true, horizontalScroll: false,
    margin: { item: { horizontal: 0, vertical: 4 }, axis: 4 },
    moment: function (date) { return window.vis.moment(date).utc(); },
    tooltip: { followMouse: true, overflowMethod: "cap", delay: 100 },
    template: markLink
  });

  /* -- the histogram ------------------------------------------------------------------------------ */
  var COLORS = { Scheduled: "#1f9d55", FailedScheduling: "#c9372c", Preempted: "#d69e2e", Preempting: "#b7791f" };
  var SPARE = ["#2f6fde", "#805ad5", "#319795", "#718096", "#d53f8c"];
  var hist = JSON.parse(seed.textContent);
  function labels(h, windowMs) {
    var width = h.bucket_seconds;
    return h.buckets.map(function (b) {
      var d = new Date(b);
      if (width >= 86400) return d.toISOString().slice(0, 10);
      return utc(d, windowMs > 12 * 3600000, width < 60);
    });
  }
  function datasets(h) {
    return h.reasons.map(function (r, i) {
      return { label: r, data: h.series[r], backgroundColor: COLORS[r] || SPARE[i % SPARE.length], stack: "s" };
    });
  }
  var chart = new window.Chart(canvas, {
    type: "bar",
    data: { labels: labels(hist, 3600000), datasets: datasets(hist) },
    options: {
      animation: false, maintainAspectRatio: false,
      scales: { x: { stacked: true, ticks: { maxTicksLimit: 16, maxRotation: 0 } },
                y: { stacked: true, beginAtZero: true, title: { display: true, text: "events" } } },
      plugins: { legend: { position: "bottom", labels: { boxWidth: 12 } } },
      onClick: function (_e, elements) {
        if (!elements.length) return;
        var start = new Date(hist.buckets[elements[0].index]).getTime();
        go(start, start + Math.max(hist.bucket_seconds * 1000, MIN_WINDOW_MS), false);
      }
    }
  });
  window.schedscopeCharts.describe(chart);
  function showHistogram(h, windowMs) {
    hist = h;
    chart.data.labels = labels(h, windowMs);
    chart.data.datasets = datasets(h);
    chart.update("none");
    window.schedscopeCharts.describe(chart);
    var unit = document.getElementById("histogram-unit");
    if (unit) unit.textContent = "per " + formatWindow(h.bucket_seconds * 1000) + ", stacked; click a bar to zoom to it";
  }

  /* -- the swimlanes ------------------------------------------------------------------------------- */
  function groupContent(lane) {
    var el = document.createElement("span");
    var a = document.createElement("a");
    a.href = podLink(lane.pod); a.textContent = lane.pod; a.className = "lane-pod";
    el.appendChild(a);
    var s = document.createElement("span");
    s.className = "q q-" + lane.state; s.textContent = lane.state === "bound" ? "bound" : lane.state === "gone" ? "deleted" : (QUEUES[lane.state] || lane.state);
    el.appendChild(document.createTextNode(" ")); el.appendChild(s);
    if (lane.hidden_attempts) {
      var h = document.createElement("span"); h.className = "muted";
      h.textContent = " +" + lane.hidden_attempts + " older attempts (zoom in)";
      el.appendChild(h);
    }
    return el;
  }
  function markItem(lane, m, id) {
    var t = new Date(m.time), what, cls, href;
    if (m.kind === "attempt") {
      cls = "mark r-" + m.result; href = podLink(lane.pod) + "?cycle=" + m.seq;
      what = "attempt #" + m.attempt + " · " + m.result + (m.node ? " → " + m.node : "") + " · " + utc(t, false, true) +
        " · " + (m.ms || 0).toFixed(1) + " ms";
    } else {
      cls = "mark m-" + m.kind; href = podLink(lane.pod);
      what = (m.kind === "bound" ? "bound to " + m.node : "deleted (preempted)") + " · " + utc(t, false, true);
    }
    var title = escapeHtml(what) + (m.message ? "<br>" + escapeHtml(m.message) : "") +
      (m.kind === "attempt" ? "<br><i>click: its decision trace</i>" : "");
    return { id: id, group: lane.pod, start: t, type: "point", content: "", className: cls, title: title, href: href,
             label: lane.pod + ": " + what + (m.message ? " · " + m.message : "") };
  }
  /* The data set made equal to ``list`` (by id), leaving alone what ``same`` finds unchanged: a refetch keeps their
     elements, and so the keyboard focus on a mark or a pod's link. */
  function sync(set, list, same) {
    var keep = {};
    list.forEach(function (x) { keep[x.id] = true; });
    set.remove(set.getIds().filter(function (id) { return !keep[id]; }));
    set.update(list.filter(function (x) { var old = set.get(x.id); return !old || !same(old, x); }));
  }
  function showLanes(data) {
    var now = Date.now(), list = [];
    data.lanes.forEach(function (lane, i) {
      lane.segments.forEach(function (s, j) {
        var start = new Date(s.start), end = s.open && data.live ? new Date(Math.max(now, Date.parse(s.end))) : new Date(s.end);
        list.push({ id: lane.pod + " s" + j, group: lane.pod, start: start, end: end, type: "range", content: "",
                    className: "seg seg-" + s.kind, open: s.open && data.live,
                    title: QUEUES[s.kind] + " · " + utc(start, false, true) + " → " + (s.open ? "now" : utc(end, false, true)) +
                      " · " + seconds(end - start) });
      });
      lane.marks.forEach(function (m) { list.push(markItem(lane, m, lane.pod + " " + m.kind + " " + (m.seq || m.time))); });
    });
    sync(groups, data.lanes.map(function (lane, i) {
      return { id: lane.pod, content: groupContent(lane), order: i, shows: lane.state + " " + lane.hidden_attempts };
    }), function (a, b) { return a.order === b.order && a.shows === b.shows; });
    sync(items, list, function (a, b) {
      return a.start.getTime() === b.start.getTime() && (a.end ? a.end.getTime() : 0) === (b.end ? b.end.getTime() : 0) &&
        a.className === b.className && a.title === b.title;
    });
    status.textContent = data.lanes.length ? data.lanes.length + " pod" + (data.lanes.length === 1 ? "" : "s") +
      (data.more ? ", the most recently active" : "") + " · " + (data.live ? "live" : "until " + data.end.slice(0, 19).replace("T", " ")) :
      "no pod in this window";
    box.dataset.window = data.window;
    box.dataset.buckets = String(data.histogram.buckets.length);
    box.dataset.bucketSeconds = String(data.bucket_seconds);
  }

  /* -- the window: URL, fetch, page regions ---------------------------------------------------------- */
  function params() {
    var p = new URLSearchParams(location.search);
    p.delete("page");
    return p;
  }
  function fetchWindow() {
    state.fetching = true; state.lastFetch = Date.now();
    var p = params();
    return fetch(api + "?" + p.toString(), { credentials: "same-origin", headers: { Accept: "application/json" } })
      .then(function (r) { if (!r.ok) throw new Error("timeline: " + r.status); return r.json(); })
      .then(function (data) {
        state.live = data.live;
        state.windowMs = Date.parse(data.end) - Date.parse(data.start);
        showLanes(data);
        showHistogram(data.histogram, state.windowMs);
        return data;
      })
      .catch(function (err) { status.textContent = String(err.message || err); })
      .then(function (data) { state.fetching = false; return data; });
  }
  function refreshList() {
    fetch(location.href, { credentials: "same-origin" })
      .then(function (r) { return r.ok ? r.text() : null; })
      .then(function (html) {
        if (!html) return;
        var doc = new DOMParser().parseFromString(html, "text/html");
        ["events-head", "events-panel"].forEach(function (id) {
          var mine = document.getElementById(id), fresh = doc.getElementById(id);
          if (mine && fresh) {
            mine.innerHTML = fresh.innerHTML;
            window.schedscopeClock.localize(mine);
          }
        });
      })
      .catch(function () { /* the list stays as it was; the next change retries */ });
  }
  function syncForm(win, until) {
    var sel = document.getElementById("window-select"), input = document.getElementById("until-input");
    if (sel) {
      if (!Array.prototype.some.call(sel.options, function (o) { return o.value === win; })) {
        var o = document.createElement("option"); o.value = win; o.textContent = "last " + win; sel.appendChild(o);
      }
      sel.value = win;
    }
    if (input) input.value = until || "";
  }
  /* Show [start, end] (ms): the URL first (so a reload restores it), then the data of that window. */
  function go(start, end, keepView) {
    var win = formatWindow(end - start), live = end >= Date.now() - 1000;
    var p = new URLSearchParams(location.search);
    p.delete("page"); p.set("window", win);
    if (live) p.delete("until"); else p.set("until", isoSeconds(new Date(end)));
    history.replaceState(null, "", location.pathname + "?" + p.toString());
    syncForm(win, live ? "" : isoSeconds(new Date(end)));
    state.live = live; state.windowMs = Math.max(1000, Math.round((end - start) / 1000) * 1000);
    if (!keepView) timeline.setWindow(start, end, { animation: false });
    fetchWindow().then(refreshList);
  }

  /* The user moves the view: the live ticker leaves it alone until the gesture has settled and been applied. */
  timeline.on("rangechange", function (props) { if (props.byUser) state.interacting = true; });
  timeline.on("rangechanged", function (props) {
    if (!props.byUser) return;
    clearTimeout(state.settle);   // one fetch per gesture: a wheel zoom fires this once per notch
    state.settle = setTimeout(function () {
      state.interacting = false;
      go(props.start.getTime(), props.end.getTime(), true);
    }, SETTLE_MS);
  });
  /* The zoom buttons: half or twice the window around its middle (a live window keeps ending now). */
  function zoom(factor) {
    var w = timeline.getWindow(), start = w.start.getTime(), end = w.end.getTime();
    var width = Math.min(MAX_WINDOW_MS, Math.max(MIN_WINDOW_MS, (end - start) * factor));
    var to = state.live ? Date.now() : Math.min(Date.now(), (start + end + width) / 2);
    go(to - width, to, false);
  }
  document.getElementById("zoom-in").addEventListener("click", function () { zoom(0.5); });
  document.getElementById("zoom-out").addEventListener("click", function () { zoom(2); });

  timeline.on("click", function (props) {
    if (props.item == null) return;
    var item = items.get(props.item);
    if (item && item.href) location.href = item.href;
  });

  /* Live: open bars reach the present and the window's right edge follows it; new data at most every 2 s. */
  document.addEventListener("schedscope:update", function () {
    if (!state.live || state.fetching || Date.now() - state.lastFetch < REFETCH_MS) return;
    fetchWindow();
  });
  setInterval(function () {
    if (!state.live || state.windowMs === null || state.interacting) return;
    var now = Date.now();
    items.update(items.get({ filter: function (it) { return it.open; } }).map(function (it) {
      return { id: it.id, end: new Date(Math.max(now, it.start.getTime())) };
    }));
    timeline.setWindow(now - state.windowMs, now, { animation: false });
  }, 1000);

  fetchWindow().then(function (data) {
    if (data) timeline.setWindow(Date.parse(data.start), data.live ? Date.now() : Date.parse(data.end), { animation: false });
  });
  window.schedscopeTimeline = { timeline: timeline, chart: chart, items: items, go: go };
})();
