/* Text alternatives of the Chart.js charts. describe(chart) gives the canvas role="img" and an aria-label that sums
   the chart up (its data-title, then each dataset's latest value or total), and fills the table whose id is the
   canvas's id + "-numbers" (in a <details> under the chart) with the numbers:
   - a chart over time (points {x, y}): per dataset its latest, lowest and highest value;
   - a chart over buckets (labels): per bucket that has any value, each dataset's value.
   Called after every update of the chart, so both follow the live data. */
(function () {
  "use strict";

  function fmt(v) { return v === null || v === undefined || isNaN(v) ? "–" : Number.isInteger(v) ? String(v) : v.toFixed(1); }
  function value(p) { return p !== null && typeof p === "object" ? p.y : p; }
  function numbers(d) { return d.data.map(value).filter(function (v) { return typeof v === "number" && !isNaN(v); }); }

  function row(cells, head) {
    var tr = document.createElement("tr");
    cells.forEach(function (c, i) {
      var td = document.createElement(head || i === 0 ? "th" : "td");
      if (head) td.scope = "col"; else if (i === 0) td.scope = "row"; else td.className = "num";
      td.textContent = c;
      tr.appendChild(td);
    });
    return tr;
  }

  function overTime(chart) {
    var rows = chart.data.datasets.map(function (d) {
      var v = numbers(d);
      return [d.label, fmt(v[v.length - 1]), fmt(v.length ? Math.min.apply(null, v) : null),
              fmt(v.length ? Math.max.apply(null, v) : null)];
    });
    return { head: ["", "latest", "lowest", "highest"], rows: rows,
             summary: "latest " + rows.map(function (r) { return r[0] + " " + r[1]; }).join(", ") };
  }

  function overBuckets(chart) {
    var sets = chart.data.datasets, rows = [];
    chart.data.labels.forEach(function (label, i) {
      var cells = sets.map(function (d) { return value(d.data[i]); });
      if (cells.some(function (v) { return v; })) rows.push([String(label)].concat(cells.map(fmt)));
    });
    var totals = sets.filter(function (d) { return d.type !== "line"; }).map(function (d) {
      return d.label + " " + fmt(numbers(d).reduce(function (a, b) { return a + b; }, 0));
    });
    return { head: [""].concat(sets.map(function (d) { return d.label; })), rows: rows,
             summary: chart.data.labels.length + " buckets" + (totals.length ? ", in all: " + totals.join(", ") : "") };
  }

  function describe(chart) {
    var canvas = chart.canvas, text = chart.data.labels && chart.data.labels.length ? overBuckets(chart) : overTime(chart);
    canvas.setAttribute("role", "img");
    canvas.setAttribute("aria-label", (canvas.dataset.title || "chart") + ": " + text.summary);
    var table = document.getElementById(canvas.id + "-numbers");
    if (!table) return;
    var head = document.createElement("thead"), body = document.createElement("tbody");
    head.appendChild(row(text.head, true));
    text.rows.forEach(function (r) { body.appendChild(row(r)); });
    if (!text.rows.length) body.appendChild(row(["no data yet"]));
    table.replaceChildren(head, body);
  }

  window.schedscopeCharts = { describe: describe };
})();
