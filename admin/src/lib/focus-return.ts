// Where focus goes when a modal opened from a list closes. The Modal returns focus to what was
// focused when it opened, but a row action chosen from the row's "Actions" menu was a menu item
// that is gone by then, so focus fell to the page and a keyboard user started again from the top.
// Each list remembers the last control focused inside it (the row's Actions button, or the
// row's own action button), and when a modal leaves the page with focus on nothing, focus goes
// back there. Every list gets it through ListView, whether the modal is DataViews' RenderModal or
// a screen's own ActionModal.
import { type RefObject, useEffect } from 'react';

/** The control that opened the modal now open, or last focused in a list (one for the page). */
let opener: HTMLElement | null = null;

/** Where focus may go while an opener stays the one to return to: a modal, a menu, a popover. */
const TRANSIENT = '.components-modal__screen-overlay, [role="menu"], .components-popover, [data-base-ui-portal], [data-floating-ui-portal]';

function isModal(node: Node): boolean {
  return node instanceof HTMLElement && (node.matches('.components-modal__screen-overlay') || node.querySelector('.components-modal__screen-overlay') !== null);
}

export function useFocusReturn(root: RefObject<HTMLElement | null>): void {
  useEffect(() => {
    const onFocusIn = (event: FocusEvent) => {
      const target = event.target;
      if (!(target instanceof HTMLElement)) return;
      if (root.current?.contains(target)) {
        if (target.matches('button, a[href], [role="button"]')) opener = target;
      } else if (!target.closest(TRANSIENT) && !document.querySelector('.components-modal__screen-overlay')) {
        // Focus moved on elsewhere on the page (another list keeps its own): this list's opener is stale.
        if (opener && root.current?.contains(opener)) opener = null;
      }
    };
    const observer = new MutationObserver((records) => {
      if (!records.some((r) => [...r.removedNodes].some(isModal))) return;
      requestAnimationFrame(() => {
        const active = document.activeElement;
        const lost = active === null || active === document.body || !active.isConnected;
        if (lost && opener?.isConnected && root.current?.contains(opener) && !document.querySelector('.components-modal__screen-overlay')) opener.focus();
      });
    });
    document.addEventListener('focusin', onFocusIn);
    observer.observe(document.body, { childList: true });
    return () => {
      document.removeEventListener('focusin', onFocusIn);
      observer.disconnect();
    };
  }, [root]);
}
