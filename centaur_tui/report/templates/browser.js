// The bundle's judgment browser: plain JavaScript, no library, no request (the data is data.js).
// Untrusted text (outputs, rationales) only ever reaches the page through textContent.
(function () {
  "use strict";
  var data = window.CENTAUR_BUNDLE;
  var list = document.getElementById("list");
  var count = document.getElementById("count");
  var box = document.getElementById("q");

  function el(tag, text, cls) {
    var node = document.createElement(tag);
    if (text !== undefined && text !== null) node.textContent = String(text);
    if (cls) node.className = cls;
    return node;
  }

  function outputBlock(label, id) {
    var out = data.outputs[id] || { candidate: "?", worker: "?", text: "", assistance: null };
    var div = el("div");
    div.appendChild(el("h4", label + ": " + out.candidate + " (worker " + out.worker + ")"));
    div.appendChild(el("pre", out.text, "text"));
    if (out.assistance) {
      div.appendChild(el("p", "Assistance text:"));
      div.appendChild(el("pre", out.assistance, "text"));
    }
    return div;
  }

  function judgmentBlock(j) {
    var div = el("div", null, "judgment");
    div.appendChild(el("p", j.judge + " (" + j.judge_kind + (j.judge_family ? ", " + j.judge_family : "") +
      "), order: option 1 = " + j.option1 + ", option 2 = " + j.option2 + "; winner: " +
      (j.valid ? j.winner : "invalid (" + j.invalid_reason + ")") + (j.revision ? "; revision " + j.revision : "")));
    if (j.scores.length) {
      var t = el("table");
      var head = el("tr");
      ["candidate", "dimension", "kind", "score"].forEach(function (h) { head.appendChild(el("th", h)); });
      t.appendChild(head);
      j.scores.forEach(function (s) {
        var r = el("tr");
        s.forEach(function (c) { r.appendChild(el("td", c)); });
        t.appendChild(r);
      });
      div.appendChild(t);
    }
    div.appendChild(el("p", j.rationale || "(no rationale)", "rationale"));
    return div;
  }

  function comparisonBlock(c, open) {
    var d = el("details", null, "comparison");
    d.id = "c-" + c.id;
    d.open = open;
    d.appendChild(el("summary", "run " + c.run + " · " + c.task + " · " + c.mode + " · " + c.a + " vs " + c.b +
      " · " + c.judgments.length + " judgment(s)"));
    d.addEventListener("toggle", function () {
      if (!d.open || d.dataset.filled) return;
      d.dataset.filled = "1";
      var both = el("div", null, "outputs");
      both.appendChild(outputBlock("A", c.output_a));
      both.appendChild(outputBlock("B", c.output_b));
      d.appendChild(both);
      c.judgments.forEach(function (j) { d.appendChild(judgmentBlock(j)); });
    });
    return d;
  }

  function show() {
    var q = box.value.trim().toLowerCase();
    list.textContent = "";
    var shown = 0;
    data.comparisons.forEach(function (c) {
      var hit = !q || c.judgments.some(function (j) { return (j.rationale || "").toLowerCase().indexOf(q) >= 0; });
      if (!hit) return;
      shown += 1;
      var block = comparisonBlock(c, false);
      list.appendChild(block);
      if (q && shown <= 50) { block.open = true; block.dispatchEvent(new Event("toggle")); }
    });
    count.textContent = shown + " of " + data.comparisons.length + " comparison(s)";
  }

  box.addEventListener("input", show);
  show();
})();
