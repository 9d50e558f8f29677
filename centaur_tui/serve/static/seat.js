/* The expert seat's shared script: posting with the CSRF token, the link's heartbeat, notices. No third party. */
"use strict";
(function () {
  const meta = (name) => {
    const el = document.querySelector('meta[name="' + name + '"]');
    return el ? el.getAttribute("content") : "";
  };
  const Seat = {
    ended: false,
    RETRY_MS: 3000,
    /* Worth trying again: no answer at all, too many requests at once, or a server error. */
    retryable(status) { return status === 0 || status === 429 || status >= 500; },
    csrf: meta("csrf-token"),
    /* POST JSON; resolves to {status, body}. keepalive lets a save finish while the tab closes. */
    async post(path, payload, keepalive) {
      if (Seat.ended) return { status: 403, body: { ended: true } };
      let response;
      try {
        response = await fetch(path, {
          method: "POST",
          headers: { "Content-Type": "application/json", "X-CSRF-Token": Seat.csrf },
          body: JSON.stringify(payload),
          credentials: "same-origin",
          keepalive: Boolean(keepalive),
        });
      } catch (err) {
        return { status: 0, body: { error: "The server cannot be reached; your work is kept here and saved when it comes back." } };
      }
      let body = {};
      try { body = await response.json(); } catch (err) { body = {}; }
      if (response.status === 403 && body.ended) Seat.end();
      return { status: response.status, body: body };
    },
    end() {
      if (Seat.ended) return;
      Seat.ended = true;
      document.body.classList.add("link-ended");
      const box = document.getElementById("ended");
      if (box) box.hidden = false;
      document.querySelectorAll("input, textarea, button, select").forEach((el) => { el.disabled = true; });
      const main = document.getElementById("main");
      if (main) main.setAttribute("aria-hidden", "true");
      if (box) box.focus && box.focus();
    },
    notice(text) {
      const box = document.getElementById("notice");
      if (!box) return;
      box.textContent = text;
      box.hidden = !text;
    },
    /* A notice to show on the next page (a reload after another tab saved newer work). */
    noticeAfterReload(text) {
      try { sessionStorage.setItem("centaur-notice", text); } catch (err) { /* storage off: no notice */ }
    },
    data() {
      const el = document.getElementById("seat-data");
      return el ? JSON.parse(el.textContent) : null;
    },
    typing(el) {
      if (!el) return false;
      if (el.tagName === "TEXTAREA") return true;
      if (el.tagName === "INPUT") return !["range", "radio", "checkbox", "button", "submit"].includes(el.type);
      return Boolean(el.isContentEditable);
    },
    clock(seconds) {
      const s = Math.max(0, Math.floor(seconds));
      const m = Math.floor(s / 60);
      return String(m).padStart(2, "0") + ":" + String(s % 60).padStart(2, "0");
    },
  };
  window.Seat = Seat;

  document.addEventListener("DOMContentLoaded", () => {
    let pending = null;
    try { pending = sessionStorage.getItem("centaur-notice"); sessionStorage.removeItem("centaur-notice"); } catch (err) { pending = null; }
    if (pending) Seat.notice(pending);
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
    const beat = Number(meta("heartbeat")) || 20;
    const check = async () => {
      if (Seat.ended) return;
      try {
        const response = await fetch("/api/alive", { credentials: "same-origin", cache: "no-store" });
        if (response.status === 403) Seat.end();
      } catch (err) { /* offline for now: try again on the next beat */ }
    };
    window.setInterval(check, beat * 1000);
    document.addEventListener("visibilitychange", () => { if (document.visibilityState === "visible") check(); });
  });
})();
