// wio triage page: the seeds table (filters, search, pages) and the copy buttons. The page
// marks itself ready (document.body.dataset.ready, with the milliseconds it took in
// readyMs) once drawn, and records any script error in document.body.dataset.errors, so a
// test can read them through the browser.
(function () {
  "use strict";
  var errors = [];
  window.addEventListener("error", function (e) {
    errors.push(String(e.message));
    document.body.dataset.errors = errors.join("\n");
  });
  var PAGE = 100;
  var data = JSON.parse(document.getElementById("seed-data").textContent);
  var rows = data.rows;
  var $ = function (id) { return document.getElementById(id); };
  function option(select, value, text) {
    var o = document.createElement("option");
    o.value = value;
    o.textContent = text;
    select.appendChild(o);
  }
  data.promises.forEach(function (p, i) { option($("f-promise"), String(i), p); });
  var nodes = {};
  data.keys.forEach(function (k, i) {
    option($("f-fault"), String(i), k);
    var at = k.lastIndexOf(" @ ");
    if (at >= 0) { nodes[k.slice(at + 3)] = true; }
  });
  Object.keys(nodes).sort().forEach(function (n) { option($("f-node"), n, n); });
  function secs(ns) { return (ns / 1e9).toFixed(3) + " s"; }
  var shown = [];
  var page = 0;
  function matches(r, f) {
    if (f.verdict !== "" && String(r[1]) !== f.verdict) { return false; }
    if (f.promise !== "" && r[5].indexOf(Number(f.promise)) < 0) { return false; }
    if (f.fault !== "" && r[4].indexOf(Number(f.fault)) < 0) { return false; }
    if (f.node !== "") {
      var hit = r[4].some(function (k) {
        var key = data.keys[k];
        return key.slice(key.lastIndexOf(" @ ") + 3) === f.node || (" " + key + " ").indexOf(" " + f.node + " ") >= 0;
      });
      if (!hit) { return false; }
    }
    if (f.search !== "") {
      if (String(r[0]) !== f.search && r[2].indexOf(f.search.toLowerCase()) !== 0) { return false; }
    }
    return true;
  }
  function filter() {
    var f = {
      verdict: $("f-verdict").value, promise: $("f-promise").value, node: $("f-node").value,
      fault: $("f-fault").value, search: $("f-search").value.trim()
    };
    shown = rows.filter(function (r) { return matches(r, f); });
    page = 0;
    draw();
  }
  function draw() {
    var body = $("seeds-table").tBodies[0];
    var pages = Math.max(1, Math.ceil(shown.length / PAGE));
    var frag = document.createDocumentFragment();
    shown.slice(page * PAGE, page * PAGE + PAGE).forEach(function (r) {
      var tr = document.createElement("tr");
      tr.id = "row-" + r[0];
      tr.className = r[1] ? "failing" : "passing";
      var cells = [
        String(r[0]), r[1] ? "failing" : "passing", r[1] ? (r[6] || "") : "", secs(r[3]),
        r[4].map(function (k) { return data.keys[k]; }).join(", "), r[2]
      ];
      cells.forEach(function (c, i) {
        var td = document.createElement("td");
        if (i === 0 && r[1] && document.getElementById("seed-" + r[0])) {
          var a = document.createElement("a");
          a.href = "#seed-" + r[0];
          a.textContent = c;
          td.appendChild(a);
        } else {
          td.textContent = c;
        }
        if (i === 2 && r[7]) { td.title = r[7]; }
        tr.appendChild(td);
      });
      frag.appendChild(tr);
    });
    body.textContent = "";
    body.appendChild(frag);
    $("seeds-count").textContent = shown.length + " of " + rows.length + " branches";
    $("page").textContent = "page " + (page + 1) + " of " + pages;
    $("prev").disabled = page === 0;
    $("next").disabled = page + 1 >= pages;
  }
  ["f-verdict", "f-promise", "f-node", "f-fault"].forEach(function (id) { $(id).addEventListener("change", filter); });
  $("f-search").addEventListener("input", filter);
  $("prev").addEventListener("click", function () { if (page > 0) { page -= 1; draw(); } });
  $("next").addEventListener("click", function () { if ((page + 1) * PAGE < shown.length) { page += 1; draw(); } });
  document.querySelectorAll("button.copy").forEach(function (b) {
    b.addEventListener("click", function () {
      var text = b.dataset.copy;
      var done = function () { b.textContent = "copied"; };
      if (navigator.clipboard && navigator.clipboard.writeText) {
        navigator.clipboard.writeText(text).then(done, function () { b.textContent = "select and copy"; });
      } else {
        b.textContent = "select and copy";
      }
    });
  });
  filter();
  // Milliseconds from the start of navigation until the page was drawn.
  document.body.dataset.readyMs = String(Math.round(performance.now()));
  document.body.dataset.ready = "1";
})();
