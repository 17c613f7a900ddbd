/** @module Small shared pieces: a confirmation dialog, time formatting, a problem's message. */
import type { ComponentChildren } from 'preact';
import { useEffect, useRef } from 'preact/hooks';
import { ApiProblem } from './api.js';

/**
 * A modal `<dialog>`: the browser keeps focus inside it, Escape cancels, and focus goes back to
 * the button that opened it when it closes.
 */
export function ConfirmDialog(props: { title: string; confirmLabel: string; onConfirm: () => void; onCancel: () => void; children?: ComponentChildren }) {
  const ref = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    const dialog = ref.current!;
    const opener = document.activeElement as HTMLElement | null;
    dialog.showModal();
    return () => opener?.focus();
  }, []);
  return (
    <dialog ref={ref} aria-labelledby="dialog-title" onCancel={(e) => { e.preventDefault(); props.onCancel(); }}>
      <form method="dialog" onSubmit={(e) => { e.preventDefault(); props.onConfirm(); }}>
        <h2 id="dialog-title">{props.title}</h2>
        {props.children}
        <div class="actions">
          <button type="submit" class="danger">{props.confirmLabel}</button>
          <button type="button" onClick={props.onCancel}>Cancel</button>
        </div>
      </form>
    </dialog>
  );
}

export const formatTime = (iso: string | null | undefined): string => (iso ? new Date(iso).toLocaleString() : '—');

/** `m:ss` of a number of seconds. */
export function clock(seconds: number): string {
  const s = Math.max(0, Math.floor(seconds));
  return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, '0')}`;
}

export const messageOf = (err: unknown): string => (err instanceof ApiProblem ? `${err.message} (${err.code})` : String((err as Error)?.message ?? err));

export function ErrorNote({ error }: { error: string | null }) {
  return error ? <p class="error" role="alert">{error}</p> : null;
}
