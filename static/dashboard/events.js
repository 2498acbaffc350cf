/* The event timeline chart (Chart.js, stacked bars per minute or hour by reason); a click zooms the
   window to that bucket by reloading with ?until=...&window=... (the server reads the stored history). */
(function () {
  "use strict";
  var el = document.getElementById("event-chart-data"), canvas = document.getElementById("event-chart");
  if (!el || !canvas || !window.Chart) return;
  var d = JSON.parse(el.textContent);
  var colors = { Scheduled: "#1f9d55", FailedScheduling: "#c9372c", Preempted: "#d69e2e", Preempting: "#b7791f" };
  var spare = ["#2f6fde", "#805ad5", "#319795", "#718096", "#d53f8c"];
  var chart = new window.Chart(canvas, {
    type: "bar",
    data: {
      labels: d.buckets.map(function (b) { return new Date(b).toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" }); }),
      datasets: d.reasons.map(function (r, i) {
        return { label: r, data: d.series[r], backgroundColor: colors[r] || spare[i % spare.length], stack: "s" };
      })
    },
    options: {
      animation: false, maintainAspectRatio: false,
      scales: { x: { stacked: true, ticks: { maxTicksLimit: 16 } }, y: { stacked: true, beginAtZero: true, title: { display: true, text: "events" } } },
      plugins: { legend: { position: "bottom", labels: { boxWidth: 12 } } },
      onClick: function (_e, items) {
        if (!items.length) return;
        var start = new Date(d.buckets[items[0].index]);
        var span = d.unit === "hour" ? 60 : 1;
        var until = new Date(start.getTime() + span * 60000).toISOString().slice(0, 16);
        var p = new URLSearchParams(location.search);
        p.set("until", until); p.set("window", d.unit === "hour" ? "60" : "15"); p.delete("page");
        location.search = p.toString();
      }
    }
  });
  window.schedscopeEventChart = chart;
})();
