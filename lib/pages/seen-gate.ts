/** The attribute that marks a submit button as held off until she has seen the page ({@link SEEN_GATE_SCRIPT}). */
export const SEEN_GATE_ATTRIBUTE = 'data-seen-gate';

const HINT_ID = 'seen-gate-hint';

/**
 * What tells her, while Allow is held off, how to turn it on: shown, and Allow's description, only then. Someone who
 * moves no pointer (voice control, switch access, a screen reader) presses a key. Placed after the buttons: shown or
 * hidden, it moves nothing she may be aiming at.
 */
export const SEEN_GATE_HINT = `<p id="${HINT_ID}" hidden>Allow turns on once you move the pointer or press a key, such as Tab.</p>`;

/**
 * The script that holds off every button marked {@link SEEN_GATE_ATTRIBUTE} (double-clickjacking: a hostile page asks
 * for a double-click and puts this page under the pointer between its clicks, so the second lands on it): a form it
 * submits is not sent (a click that comes too early, before the page is parsed, turns it off and shows the hint), and
 * it is `disabled`, until the page, shown and focused, has seen a key pressed or a pointer
 * moved 10 CSS pixels, no button held, from where it first saw it (a key held since before, repeating, is no press;
 * {@link SEEN_GATE_HINT} says how meanwhile); on a device with no pointer that hovers (touch
 * only), until the page has been shown and focused for a second. Losing focus or being hidden (or brought back from
 * the back-forward cache) starts over. Without scripts the button is a plain one: the hostile page needs scripts too.
 */
export const SEEN_GATE_SCRIPT = `(() => {
  const gated = '[${SEEN_GATE_ATTRIBUTE}]';
  const touchOnly = matchMedia('(any-hover: none)').matches;
  let seen = false, from, timer;
  const shown = () => document.visibilityState === 'visible' && document.hasFocus();
  const see = (on) => {
    seen = on;
    const hint = document.getElementById('${HINT_ID}');
    if (hint) hint.hidden = on;
    for (const button of document.querySelectorAll(gated)) {
      button.disabled = !on;
      if (on) button.removeAttribute('aria-describedby');
      else button.setAttribute('aria-describedby', '${HINT_ID}');
    }
  };
  const unseen = () => {
    see(false);
    from = undefined;
    clearTimeout(timer);
    if (touchOnly && shown()) timer = setTimeout(() => see(shown()), 1000);
  };
  const on = (target, type, listener) => target.addEventListener(type, listener, true);
  on(window, 'submit', (e) => { if (!seen && e.submitter?.matches(gated)) { e.preventDefault(); see(false); } });
  on(window, 'keydown', (e) => { if (e.isTrusted && !e.repeat && shown()) see(true); });
  for (const type of ['pointerover', 'pointerdown', 'pointermove']) on(window, type, (e) => {
    if (!e.isTrusted || !shown()) return;
    from ??= [e.clientX, e.clientY];
    if (type === 'pointermove' && !e.buttons && Math.hypot(e.clientX - from[0], e.clientY - from[1]) >= 10) see(true);
  });
  window.addEventListener('focus', unseen);
  window.addEventListener('blur', unseen);
  window.addEventListener('pageshow', (e) => { if (e.persisted) unseen(); });
  on(document, 'visibilitychange', unseen);
  on(document, 'DOMContentLoaded', () => see(seen));
  unseen();
})();`;
