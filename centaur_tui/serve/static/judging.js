/* The judging page: sliders, winner, rationale; keys whatever was clicked last; drafts saved as they change. */
"use strict";
(function () {
  const SAVE_DELAY = 400; /* ms after the last change */
  const data = Seat.data();
  if (!data) return;
  const form = document.getElementById("judgment");
  const sliders = Array.from(document.querySelectorAll("input.score"));
  const radios = Array.from(document.querySelectorAll('input[name="winner"]'));
  const rationale = document.getElementById("rationale");
  const missingLine = document.getElementById("missing");
  const proposalLine = document.getElementById("proposal");
  const countLine = document.getElementById("rationale-count");
  const clockEl = document.getElementById("clock");

  const draft = {
    scores: {},
    winner: data.draft.winner,
    rationale: data.draft.rationale || "",
    /* Characters pasted into the rationale (an integrity signal for the organiser; null: not recorded). */
    pasted: data.draft.pasted_chars == null ? (data.revising ? null : 0) : Number(data.draft.pasted_chars) || 0,
  };
  for (const dim of data.dimensions) {
    const pair = (data.draft.scores && data.draft.scores[dim]) || [null, null];
    draft.scores[dim] = [pair[0] == null ? null : pair[0], pair[1] == null ? null : pair[1]];
  }
  let base = data.base;
  const shownAt = performance.now();
  const baseSeconds = Number(data.draft.seconds) || 0;
  const activeBase = data.draft.active_seconds == null ? 0 : Number(data.draft.active_seconds);
  let active = 0;
  let lastActivity = shownAt;
  let current = 0; /* the highlighted slider: where digits go, whatever was clicked last */
  let atWinner = false;
  let dirty = false;
  let timer = null;
  let saving = null;
  let leaving = false;

  const seconds = () => baseSeconds + (performance.now() - shownAt) / 1000;
  const activeSeconds = () => {
    const pending = Math.min(Math.max(0, performance.now() - lastActivity) / 1000, data.idleSeconds);
    return Math.min(activeBase + active + pending, seconds());
  };
  const activity = () => {
    const now = performance.now();
    active += Math.min(Math.max(0, now - lastActivity) / 1000, data.idleSeconds);
    lastActivity = now;
  };
  ["keydown", "pointerdown", "input", "wheel", "scroll"].forEach((kind) =>
    document.addEventListener(kind, activity, { capture: true, passive: true }));

  const snapshot = (extra) => Object.assign({
    scores: draft.scores,
    winner: draft.winner,
    rationale: draft.rationale,
    seconds: Math.round(seconds() * 10) / 10,
    active_seconds: Math.round(activeSeconds() * 10) / 10,
    pasted_chars: draft.pasted,
  }, extra || {});

  /* -- showing ------------------------------------------------------------------------------ */

  const score = (slider) => draft.scores[slider.dataset.dim][Number(slider.dataset.option) - 1];
  const showSlider = (slider) => {
    const value = score(slider);
    const out = document.getElementById(slider.id.replace(/^s-/, "v-"));
    if (value == null) {
      slider.classList.add("unset");
      slider.value = "5";
      slider.setAttribute("aria-valuetext", "not scored");
      out.textContent = "–";
    } else {
      slider.classList.remove("unset");
      slider.value = String(value);
      slider.setAttribute("aria-valuetext", String(value));
      out.textContent = String(value);
    }
  };
  const highlight = () => {
    sliders.forEach((s, i) => s.closest(".slider-row").classList.toggle("current", i === current && !atWinner));
    document.getElementById("winner").classList.toggle("current", atWinner);
  };
  const averages = () => {
    const dims = data.dimensions;
    if (!dims.length) return null;
    const sums = [0, 0];
    for (const dim of dims) {
      for (const o of [0, 1]) {
        const v = draft.scores[dim][o];
        if (v == null) return null;
        sums[o] += v;
      }
    }
    return [sums[0] / dims.length, sums[1] / dims.length];
  };
  const missing = () => {
    const lacks = [];
    let unscored = 0;
    for (const dim of data.dimensions) for (const v of draft.scores[dim]) if (v == null) unscored += 1;
    if (unscored) lacks.push(unscored + " score" + (unscored === 1 ? "" : "s"));
    if (draft.winner == null || (draft.winner === "tie" && !data.allowTies)) lacks.push("winner");
    const length = draft.rationale.trim().length;
    if (length < data.minRationale) lacks.push("rationale (" + length + "/" + data.minRationale + " characters)");
    return lacks;
  };
  const showStatus = () => {
    const lacks = missing();
    missingLine.textContent = lacks.length ? "Still missing: " + lacks.join(", ") + "." : "Complete: ready to submit.";
    missingLine.classList.toggle("complete", !lacks.length);
    const means = averages();
    if (means) {
      let text = "Rubric averages: option 1 " + means[0].toFixed(1) + ", option 2 " + means[1].toFixed(1) + ".";
      if (means[0] !== means[1]) text += " They suggest option " + (means[0] > means[1] ? "1" : "2") + "; your pick stands.";
      proposalLine.textContent = text;
    } else {
      proposalLine.textContent = "";
    }
    countLine.textContent = draft.rationale.trim().length + " of at least " + data.minRationale + " characters.";
  };
  const showAll = () => {
    sliders.forEach(showSlider);
    radios.forEach((r) => { r.checked = r.value === draft.winner; });
    showStatus();
    highlight();
  };

  /* -- saving ------------------------------------------------------------------------------- */

  const stale = () => {
    leaving = true;
    Seat.noticeAfterReload("Another tab or window saved newer work on this comparison: this page was reloaded with it.");
    window.location.reload();
  };
  const save = async (keepalive) => {
    if (data.revising || Seat.ended || leaving) return;
    if (saving) { dirty = true; return; }
    dirty = false;
    saving = Seat.post("/api/judging/save", { place: data.place, base: base, draft: snapshot() }, keepalive);
    const result = await saving;
    saving = null;
    if (result.status === 200) {
      base = result.body.version;
      document.body.dataset.saved = String(base);
      if (dirty) keepLocal(); else dropLocal();
    } else if (result.status === 409 && result.body.stale) {
      stale();
      return;
    } else if (result.status === 409 && result.body.done) {
      leaving = true;
      Seat.noticeAfterReload("This comparison was submitted in another tab or window.");
      window.location.assign("/judge");
      return;
    } else if (Seat.retryable(result.status)) {
      /* The server is unreachable or busy: the work stays here (and in this tab's storage), tried again shortly. */
      Seat.notice(result.body.error || "Saving failed; it is tried again in a moment.");
      retry();
      return;
    } else if (result.status !== 403) {
      /* Refused for good (a page out of date, a bad field): say so, never loop. */
      Seat.notice((result.body.error || "Saving was refused.") + " Reload the page to go on; your work is kept in this tab.");
      return;
    }
    if (dirty) schedule();
  };
  const retry = () => {
    dirty = true;
    if (timer) window.clearTimeout(timer);
    timer = window.setTimeout(() => { timer = null; save(false); }, Seat.RETRY_MS);
  };
  const schedule = () => {
    dirty = true;
    if (timer) window.clearTimeout(timer);
    /* A hidden tab's timers are throttled (a second or more): a change made there is saved at once. */
    if (document.visibilityState === "hidden") { timer = null; save(false); return; }
    timer = window.setTimeout(() => { timer = null; save(false); }, SAVE_DELAY);
  };
  const flushOnLeave = () => {
    if (dirty && !leaving && !data.revising) {
      if (timer) { window.clearTimeout(timer); timer = null; }
      dirty = false;
      Seat.post("/api/judging/save", { place: data.place, base: base, draft: snapshot() }, true);
    }
  };
  window.addEventListener("pagehide", flushOnLeave);
  document.addEventListener("visibilitychange", () => { if (document.visibilityState === "hidden") flushOnLeave(); });

  /* A copy of unsaved work in this tab's storage: a reload can overtake the save sent on the way
     out (its request may reach the server after the new page's), so the new page restores it. */
  const localKey = "centaur-judging-" + data.place;
  const keepLocal = () => {
    if (data.revising) return;
    try {
      sessionStorage.setItem(localKey, JSON.stringify({
        base: base, scores: draft.scores, winner: draft.winner, rationale: draft.rationale, pasted: draft.pasted,
      }));
    } catch (err) { /* storage off: the save on the way out still runs */ }
  };
  const dropLocal = () => { try { sessionStorage.removeItem(localKey); } catch (err) { /* nothing kept */ } };
  const changed = () => { showStatus(); keepLocal(); schedule(); };

  /* -- entering ----------------------------------------------------------------------------- */

  const setScore = (slider, value) => {
    draft.scores[slider.dataset.dim][Number(slider.dataset.option) - 1] = value;
    showSlider(slider);
    changed();
  };
  const focusWinner = () => {
    atWinner = true;
    highlight();
    const checked = radios.find((r) => r.checked) || radios[0];
    if (checked) checked.focus();
  };
  const moveOn = (from) => {
    if (from + 1 < sliders.length) {
      current = from + 1;
      atWinner = false;
      sliders[current].focus();
      highlight();
    } else {
      focusWinner();
    }
  };
  sliders.forEach((slider, i) => {
    slider.addEventListener("focus", () => { current = i; atWinner = false; highlight(); });
    slider.addEventListener("input", () => setScore(slider, Number(slider.value)));
    /* A click on the thumb where it stands changes nothing, yet means "this value". */
    slider.addEventListener("change", () => { if (score(slider) == null) setScore(slider, Number(slider.value)); });
    slider.addEventListener("pointerup", () => { if (score(slider) == null) setScore(slider, Number(slider.value)); });
  });
  radios.forEach((radio) => {
    radio.addEventListener("change", () => { draft.winner = radio.value; changed(); });
    radio.addEventListener("focus", () => { atWinner = true; highlight(); });
  });
  rationale.addEventListener("input", () => { draft.rationale = rationale.value; changed(); });
  /* The paste event comes before the input event that changes the text (which then saves). */
  rationale.addEventListener("paste", (event) => {
    if (data.revising) return;
    const text = event.clipboardData ? event.clipboardData.getData("text") : "";
    draft.pasted = (draft.pasted || 0) + text.length;
  });

  const pickWinner = (value) => {
    const radio = radios.find((r) => r.value === value);
    if (!radio) return;
    radio.checked = true;
    draft.winner = value;
    changed();
    rationale.focus();
  };

  document.addEventListener("keydown", (event) => {
    if (Seat.ended || event.defaultPrevented) return;
    if ((event.ctrlKey || event.metaKey) && event.key === "Enter") {
      event.preventDefault();
      submit();
      return;
    }
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    const target = event.target;
    if (Seat.typing(target)) return;
    if (document.querySelector("dialog[open]")) return;
    const key = event.key;
    if (key === "t" || key === "T") {
      if (data.allowTies) { event.preventDefault(); pickWinner("tie"); }
      return;
    }
    if (atWinner && (key === "1" || key === "2")) {
      event.preventDefault();
      pickWinner(key === "1" ? "option_1" : "option_2");
      return;
    }
    if (!sliders.length) return;
    if (/^[0-9]$/.test(key)) {
      event.preventDefault();
      const value = key === "0" ? 10 : Number(key);
      const slider = sliders[current];
      setScore(slider, value);
      moveOn(current);
      return;
    }
    if (key === "=") {
      event.preventDefault();
      const slider = sliders[current];
      const other = draft.scores[slider.dataset.dim][2 - Number(slider.dataset.option)];
      if (other == null) {
        Seat.notice("The other option has no score on this dimension yet.");
        return;
      }
      setScore(slider, other);
      moveOn(current);
    }
  });

  /* -- moving on ---------------------------------------------------------------------------- */

  const go = (url) => { leaving = true; dropLocal(); window.location.assign(url); };
  const busy = (on) => { form.querySelectorAll("button").forEach((b) => { b.disabled = on; }); };
  const finish = (result) => {
    if (result.status === 409 && result.body.stale) { stale(); return false; }
    if (result.body && typeof result.body.version === "string") base = result.body.version; /* saved, then refused */
    if (result.status !== 200) {
      Seat.notice(result.body.error || "That did not work; try again.");
      if (result.body.title === "Cannot submit" && /already judged/.test(result.body.error || "")) {
        Seat.noticeAfterReload(result.body.error);
        go("/judge");
      }
      return false;
    }
    return true;
  };

  const confirmLower = () => new Promise((resolve) => {
    const means = averages();
    if (!means || (draft.winner !== "option_1" && draft.winner !== "option_2")) { resolve(false); return; }
    const mine = draft.winner === "option_1" ? means[0] : means[1];
    const other = draft.winner === "option_1" ? means[1] : means[0];
    if (!(mine < other)) { resolve(false); return; }
    const dialog = document.getElementById("confirm-lower");
    document.getElementById("confirm-lower-text").textContent =
      (draft.winner === "option_1" ? "Option 1" : "Option 2") + " wins, but its rubric average is lower (" +
      mine.toFixed(1) + " against " + other.toFixed(1) + "). Submit it as it is?";
    const yes = document.getElementById("confirm-lower-yes");
    const no = document.getElementById("confirm-lower-no");
    const done = (answer) => { dialog.close(); yes.onclick = null; no.onclick = null; resolve(answer); };
    yes.onclick = () => done(true);
    no.onclick = () => done(null);
    dialog.addEventListener("cancel", () => done(null), { once: true });
    dialog.showModal();
    yes.focus();
  });

  const submit = async () => {
    if (Seat.ended || leaving) return;
    const lacks = missing();
    if (lacks.length) {
      Seat.notice("Not complete yet: " + lacks.join(", ") + ".");
      missingLine.focus && missingLine.focus();
      return;
    }
    const confirmed = await confirmLower();
    if (confirmed === null) return;
    if (timer) { window.clearTimeout(timer); timer = null; }
    if (saving) await saving;
    busy(true);
    const result = await Seat.post("/api/judging/submit", {
      place: data.place, base: base, revise: data.revising, draft: snapshot({ confirmed_lower: confirmed === true }),
    });
    busy(false);
    if (!finish(result)) return;
    dirty = false;
    leaving = true;
    if (result.body.reference) {
      const dialog = document.getElementById("reference");
      document.getElementById("reference-body").innerHTML = result.body.reference; /* sanitised by the server */
      document.getElementById("reference-next").onclick = () => go(result.body.next);
      dialog.addEventListener("close", () => go(result.body.next), { once: true });
      dialog.showModal();
      document.getElementById("reference-next").focus();
      return;
    }
    if (result.body.guess) {
      askGuess(result.body.guess, result.body.next);
      return;
    }
    go(result.body.next);
  };
  form.addEventListener("submit", (event) => { event.preventDefault(); submit(); });

  /* Issue 26: the optional free-text guess after a judgment (the question and the expert's own
     last answer as text, never markup; no candidate list). */
  const askGuess = (guess, next) => {
    const dialog = document.getElementById("guess");
    const field = document.getElementById("guess-text");
    document.getElementById("guess-question").textContent = String(guess.question);
    field.value = String(guess.answered || "");
    document.getElementById("guess-form").onsubmit = async (event) => {
      event.preventDefault();
      const stored = await Seat.post("/api/judging/guess", { place: data.place, text: field.value });
      if (stored.status !== 200) Seat.noticeAfterReload((stored.body && stored.body.error) || "The guess was not stored.");
      dialog.close();
    };
    document.getElementById("guess-skip").onclick = () => dialog.close();
    dialog.addEventListener("close", () => go(next), { once: true });
    dialog.showModal();
    field.focus();
  };

  const setState = async (state, note) => {
    if (Seat.ended || leaving) return;
    if (timer) { window.clearTimeout(timer); timer = null; }
    if (saving) await saving;
    busy(true);
    const result = await Seat.post("/api/judging/state", {
      place: data.place, base: base, state: state, note: note || "", draft: snapshot(),
    });
    busy(false);
    if (!finish(result)) return;
    dirty = false;
    go(result.body.next);
  };
  const skip = document.getElementById("skip");
  if (skip) skip.addEventListener("click", () => setState("skipped"));
  const flag = document.getElementById("flag");
  const flagBox = document.getElementById("flag-box");
  if (flag) {
    flag.addEventListener("click", () => { flagBox.hidden = false; document.getElementById("flag-note").focus(); });
    document.getElementById("flag-cancel").addEventListener("click", () => { flagBox.hidden = true; flag.focus(); });
    document.getElementById("flag-confirm").addEventListener("click", () =>
      setState("flagged", document.getElementById("flag-note").value));
  }

  window.setInterval(() => { clockEl.textContent = Seat.clock(seconds()); }, 1000);
  clockEl.textContent = Seat.clock(seconds());
  let restored = null;
  try { restored = JSON.parse(sessionStorage.getItem(localKey) || "null"); } catch (err) { restored = null; }
  if (restored && restored.base === base && !data.revising) {
    /* Unsaved work of this tab that the server has not seen: it comes back, and is saved. */
    for (const dim of data.dimensions) {
      const pair = restored.scores && restored.scores[dim];
      if (Array.isArray(pair) && pair.length === 2) draft.scores[dim] = pair;
    }
    draft.winner = restored.winner == null ? null : restored.winner;
    draft.rationale = typeof restored.rationale === "string" ? restored.rationale : draft.rationale;
    if (typeof restored.pasted === "number") draft.pasted = Math.max(draft.pasted || 0, restored.pasted);
    rationale.value = draft.rationale;
    schedule();
  } else {
    dropLocal();
  }
  const firstOpen = sliders.findIndex((s) => score(s) == null);
  current = firstOpen >= 0 ? firstOpen : 0;
  showAll();
  document.body.dataset.ready = "1";
})();
