/* The offline HTML packet: judge every comparison in this one file; progress kept in the browser; "Save results". */
"use strict";
(function () {
  const data = JSON.parse(document.getElementById("packet-data").textContent);
  const storeKey = "centaur-packet-" + data.packetId;
  const places = Array.from(document.querySelectorAll("section.place"));
  const notice = document.getElementById("notice");
  let state = { drafts: {}, results: {}, states: {}, current: 0 };
  try {
    const kept = JSON.parse(localStorage.getItem(storeKey) || "null");
    if (kept && typeof kept === "object") state = Object.assign(state, kept);
  } catch (err) { /* no storage: progress lasts while the page is open */ }
  const persist = () => {
    try { localStorage.setItem(storeKey, JSON.stringify(state)); } catch (err) { say("This browser keeps nothing: save your results before closing."); }
  };
  const say = (text) => { notice.textContent = text; notice.hidden = !text; };
  const typing = (el) => el && (el.tagName === "TEXTAREA" || (el.tagName === "INPUT" && !["range", "radio"].includes(el.type)));

  let shown = -1;
  let shownAt = 0;
  let lastActivity = 0;
  let active = 0;
  let current = 0;
  let atWinner = false;
  ["keydown", "pointerdown", "input", "wheel"].forEach((kind) => document.addEventListener(kind, () => {
    const now = performance.now();
    active += Math.min(Math.max(0, now - lastActivity) / 1000, data.idleSeconds);
    lastActivity = now;
  }, { capture: true, passive: true }));

  const token = (i) => data.places[i].token;
  const draftOf = (i) => {
    const t = token(i);
    if (!state.drafts[t]) {
      const scores = {};
      data.places[i].dimensions.forEach((d) => { scores[d] = [null, null]; });
      state.drafts[t] = { scores: scores, winner: null, rationale: "", seconds: 0, active_seconds: 0 };
    }
    return state.drafts[t];
  };
  const parts = (i) => {
    const section = places[i];
    return {
      section: section,
      sliders: Array.from(section.querySelectorAll("input.score")),
      radios: Array.from(section.querySelectorAll('input[type="radio"]')),
      rationale: section.querySelector("textarea.rationale-text"),
      missing: section.querySelector(".missing"),
      buttons: Array.from(section.querySelectorAll("button")),
    };
  };
  const lacking = (i, draft) => {
    const lacks = [];
    let unscored = 0;
    data.places[i].dimensions.forEach((d) => draft.scores[d].forEach((v) => { if (v == null) unscored += 1; }));
    if (unscored) lacks.push(unscored + " score" + (unscored === 1 ? "" : "s"));
    if (draft.winner == null || (draft.winner === "tie" && !data.allowTies)) lacks.push("winner");
    const n = draft.rationale.trim().length;
    if (n < data.minRationale) lacks.push("rationale (" + n + "/" + data.minRationale + " characters)");
    return lacks;
  };
  const clockIn = () => {
    if (shown < 0 || state.results[token(shown)]) return;
    const draft = draftOf(shown);
    const now = performance.now();
    draft.seconds = Math.round((draft.seconds + (now - shownAt) / 1000) * 10) / 10;
    const pending = Math.min(Math.max(0, now - lastActivity) / 1000, data.idleSeconds);
    draft.active_seconds = Math.min(draft.seconds, Math.round(((draft.active_seconds || 0) + active + pending) * 10) / 10);
    shownAt = now;
    active = 0;
    lastActivity = now;
  };
  const paint = (i) => {
    const p = parts(i);
    const done = state.results[token(i)];
    const draft = done || draftOf(i);
    p.sliders.forEach((s) => {
      const v = draft.scores[s.dataset.dim][Number(s.dataset.option) - 1];
      const out = s.parentElement.querySelector("output");
      if (v == null) { s.classList.add("unset"); s.value = "5"; s.setAttribute("aria-valuetext", "not scored"); out.textContent = "–"; }
      else { s.classList.remove("unset"); s.value = String(v); s.setAttribute("aria-valuetext", String(v)); out.textContent = String(v); }
      s.disabled = Boolean(done);
      s.parentElement.classList.toggle("current", !done && p.sliders.indexOf(s) === current && !atWinner);
    });
    p.radios.forEach((r) => { r.checked = r.value === draft.winner; r.disabled = Boolean(done); });
    p.rationale.value = draft.rationale;
    p.rationale.readOnly = Boolean(done);
    p.buttons.forEach((b) => { b.disabled = Boolean(done); });
    const lacks = done ? [] : lacking(i, draft);
    p.missing.textContent = done ? "Submitted." : (lacks.length ? "Still missing: " + lacks.join(", ") + "." : "Complete: ready to submit.");
    p.missing.classList.toggle("complete", !done && !lacks.length);
  };
  const listStates = () => {
    let judged = 0;
    data.places.forEach((place, i) => {
      const t = place.token;
      const label = state.results[t] ? "(judged)" : state.states[t] === "flagged" ? "(flagged)" : state.states[t] === "skipped" ? "(skipped)" : "";
      if (state.results[t]) judged += 1;
      document.getElementById("state-" + i).textContent = label;
    });
    document.getElementById("progress").textContent = judged + " of " + data.places.length + " judged.";
    return judged;
  };
  const show = (i) => {
    clockIn();
    places.forEach((section, n) => { section.hidden = n !== i; });
    document.getElementById("finished").hidden = i >= 0;
    shown = i;
    state.current = i;
    persist();
    listStates();
    if (i < 0) return;
    shownAt = lastActivity = performance.now();
    active = 0;
    const draft = state.results[token(i)] || draftOf(i);
    const firstOpen = parts(i).sliders.findIndex((s) => draft.scores[s.dataset.dim][Number(s.dataset.option) - 1] == null);
    current = firstOpen >= 0 ? firstOpen : 0;
    atWinner = false;
    paint(i);
  };
  const nextOpen = (after) => {
    const open = (i) => !state.results[token(i)];
    const rank = (i) => (state.states[token(i)] === "flagged" ? 2 : state.states[token(i)] === "skipped" ? 1 : 0);
    const order = data.places.map((_, i) => i).filter(open);
    if (!order.length) return -1;
    order.sort((a, b) => rank(a) - rank(b) || ((a <= after) - (b <= after)) || a - b);
    return order[0];
  };
  const changed = (i) => { persist(); paint(i); };
  const setScore = (i, slider, value) => {
    draftOf(i).scores[slider.dataset.dim][Number(slider.dataset.option) - 1] = value;
    changed(i);
  };
  const moveOn = (i) => {
    const p = parts(i);
    if (current + 1 < p.sliders.length) { current += 1; atWinner = false; p.sliders[current].focus(); }
    else { atWinner = true; (p.radios.find((r) => r.checked) || p.radios[0]).focus(); }
    paint(i);
  };

  places.forEach((section, i) => {
    const p = parts(i);
    p.sliders.forEach((s, n) => {
      s.addEventListener("focus", () => { current = n; atWinner = false; paint(i); });
      s.addEventListener("input", () => setScore(i, s, Number(s.value)));
      s.addEventListener("change", () => { if (draftOf(i).scores[s.dataset.dim][Number(s.dataset.option) - 1] == null) setScore(i, s, Number(s.value)); });
    });
    p.radios.forEach((r) => {
      r.addEventListener("change", () => { draftOf(i).winner = r.value; changed(i); });
      r.addEventListener("focus", () => { atWinner = true; });
    });
    p.rationale.addEventListener("input", () => { draftOf(i).rationale = p.rationale.value; persist(); paint(i); });
    section.querySelector("form").addEventListener("submit", (event) => { event.preventDefault(); submit(i); });
    section.querySelector("button.skip").addEventListener("click", () => mark(i, "skipped"));
    section.querySelector("button.flag").addEventListener("click", () => mark(i, "flagged"));
  });

  const confirmLower = (i) => new Promise((resolve) => {
    const draft = draftOf(i);
    const dims = data.places[i].dimensions;
    const mean = (o) => dims.reduce((sum, d) => sum + draft.scores[d][o], 0) / dims.length;
    if (draft.winner !== "option_1" && draft.winner !== "option_2") { resolve(false); return; }
    const mine = mean(draft.winner === "option_1" ? 0 : 1);
    const other = mean(draft.winner === "option_1" ? 1 : 0);
    if (!(mine < other)) { resolve(false); return; }
    const dialog = document.getElementById("confirm-lower");
    document.getElementById("confirm-lower-text").textContent = (draft.winner === "option_1" ? "Option 1" : "Option 2") +
      " wins, but its rubric average is lower (" + mine.toFixed(1) + " against " + other.toFixed(1) + "). Submit it as it is?";
    document.getElementById("confirm-lower-yes").onclick = () => { dialog.close(); resolve(true); };
    document.getElementById("confirm-lower-no").onclick = () => { dialog.close(); resolve(null); };
    dialog.showModal();
  });
  const submit = async (i) => {
    if (state.results[token(i)]) return;
    const lacks = lacking(i, draftOf(i));
    if (lacks.length) { say("Not complete yet: " + lacks.join(", ") + "."); return; }
    const confirmed = await confirmLower(i);
    if (confirmed === null) return;
    clockIn();
    const draft = draftOf(i);
    state.results[token(i)] = Object.assign({}, draft, { rationale: draft.rationale.trim(), confirmed_lower: confirmed === true });
    delete state.drafts[token(i)];
    delete state.states[token(i)];
    say("");
    show(nextOpen(i));
  };
  const mark = (i, how) => {
    state.states[token(i)] = how;
    show(nextOpen(i));
  };

  document.addEventListener("keydown", (event) => {
    if (shown < 0 || document.querySelector("dialog[open]")) return;
    if ((event.ctrlKey || event.metaKey) && event.key === "Enter") { event.preventDefault(); submit(shown); return; }
    if (event.ctrlKey || event.metaKey || event.altKey || typing(event.target) || state.results[token(shown)]) return;
    const p = parts(shown);
    const key = event.key;
    if (key === "t" || key === "T") {
      if (data.allowTies) { event.preventDefault(); draftOf(shown).winner = "tie"; changed(shown); p.rationale.focus(); }
      return;
    }
    if (atWinner && (key === "1" || key === "2")) {
      event.preventDefault();
      draftOf(shown).winner = key === "1" ? "option_1" : "option_2";
      changed(shown);
      p.rationale.focus();
      return;
    }
    const slider = p.sliders[current];
    if (!slider) return;
    if (/^[0-9]$/.test(key)) { event.preventDefault(); setScore(shown, slider, key === "0" ? 10 : Number(key)); moveOn(shown); return; }
    if (key === "=") {
      const other = draftOf(shown).scores[slider.dataset.dim][2 - Number(slider.dataset.option)];
      if (other != null) { event.preventDefault(); setScore(shown, slider, other); moveOn(shown); }
    }
  });

  document.getElementById("place-list").addEventListener("click", (event) => {
    const link = event.target.closest("a[data-index]");
    if (!link) return;
    event.preventDefault();
    show(Number(link.dataset.index));
  });
  document.querySelectorAll(".plain-toggle").forEach((button) => {
    button.addEventListener("click", () => {
      const [plainId, renderedId] = button.getAttribute("aria-controls").split(" ");
      const plain = document.getElementById(plainId);
      const rendered = document.getElementById(renderedId);
      const showPlain = plain.hidden;
      plain.hidden = !showPlain;
      rendered.hidden = showPlain;
      button.setAttribute("aria-pressed", String(showPlain));
      button.textContent = showPlain ? "Show formatted" : "Show plain text";
    });
  });
  document.getElementById("save-results").addEventListener("click", () => {
    clockIn();
    persist();
    const drafts = {};
    Object.keys(state.drafts).forEach((t) => {
      const d = state.drafts[t];
      const touched = d.winner != null || d.rationale.trim() || Object.values(d.scores).some((pair) => pair.some((v) => v != null));
      if (!state.results[t] && touched) drafts[t] = d;
    });
    const results = {
      format: "centaur-html-packet-results", version: 1, packet_id: data.packetId, packet: data.packet,
      results: state.results, drafts: drafts, states: state.states,
    };
    const blob = new Blob([JSON.stringify(results)], { type: "application/json" });
    const link = document.createElement("a");
    link.href = URL.createObjectURL(blob);
    link.download = "results-" + data.packetId.slice(0, 12) + ".json";
    document.body.appendChild(link);
    link.click();
    link.remove();
    say("Results saved to your downloads folder as " + link.download + ": send that file to the researcher.");
  });
  window.addEventListener("pagehide", () => { clockIn(); persist(); });
  const start = Number(state.current);
  show(Number.isInteger(start) && start >= 0 && start < places.length && !state.results[token(start)] ? start : nextOpen(-1));
  document.body.dataset.ready = "1";
})();
