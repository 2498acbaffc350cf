/* The shadow page's chart (Chart.js): agreement percent per time bucket (lines) over the number of bindings
   compared in it (bars). */
(function () {
  "use strict";
  var el = document.getElementById("shadow-chart-data"), canvas = document.getElementById("shadow-chart");
  if (!el || !canvas || !window.Chart) return;
  var d = JSON.parse(el.textContent);
  var fmt = d.unit === "day" ? { month: "short", day: "numeric" } : { hour: "2-digit", minute: "2-digit" };
  var chart = window.schedscopeShadowChart = new window.Chart(canvas, {
    data: {
      labels: d.buckets.map(function (b) { return new Date(b).toLocaleString([], fmt); }),
      datasets: [
        { type: "line", label: "agreement %", data: d.rate, borderColor: "#1f9d55", yAxisID: "rate", tension: .2 },
        { type: "line", label: "within ties %", data: d.within_ties_rate, borderColor: "#2f6fde", borderDash: [4, 3],
          yAxisID: "rate", tension: .2 },
        { type: "bar", label: "bindings compared", data: d.decisions, backgroundColor: "#dde1e8", yAxisID: "count" }
      ]
    },
    options: {
      animation: false, maintainAspectRatio: false,
      scales: {
        rate: { position: "left", min: 0, max: 100, title: { display: true, text: "%" } },
        count: { position: "right", beginAtZero: true, grid: { drawOnChartArea: false }, title: { display: true, text: "bindings" } }
      },
      plugins: { legend: { position: "bottom", labels: { boxWidth: 12 } } }
    }
  });
  window.schedscopeCharts.describe(chart);
})();
