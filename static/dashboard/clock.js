/* One time format on every page: 24-hour local time with seconds ("07:50:54"; or "2024-05-01 07:50:54" where the
   day matters), ISO 8601 on hover. The server renders <time class="clock"> in its own zone (the schedscope |clock
   filter); this rewrites them in the browser's zone, and live.js makes its times with the same functions. */
(function () {
  "use strict";
  function pad(n) { return (n < 10 ? "0" : "") + n; }

  function text(d, style) {
    var t = pad(d.getHours()) + ":" + pad(d.getMinutes()) + ":" + pad(d.getSeconds());
    return style === "date" ? d.getFullYear() + "-" + pad(d.getMonth() + 1) + "-" + pad(d.getDate()) + " " + t : t;
  }

  function element(iso, style) {
    var el = document.createElement("time");
    el.className = "clock"; el.dateTime = iso; el.title = iso; el.dataset.clock = style || "time";
    el.textContent = text(new Date(iso), style);
    return el;
  }

  function localize(root) {
    root.querySelectorAll("time.clock").forEach(function (el) {
      var d = new Date(el.dateTime);
      if (!isNaN(d.getTime())) el.textContent = text(d, el.dataset.clock);
    });
  }

  window.schedscopeClock = { text: text, element: element, localize: localize };
  localize(document);
})();
