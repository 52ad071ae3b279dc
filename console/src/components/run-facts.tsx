/**
 * Small pieces the Inbox, Runs, Datasets and Models pages share: a status badge, a JSON block,
 * a description list of facts, times and durations in plain words, and polling.
 */
import type { ComponentChildren } from 'preact';
import { useEffect, useRef } from 'preact/hooks';
import './console-pages.css';

/** A run's, a step's or a circuit's state, as a word with its colour (never colour alone). */
export function StateBadge({ state }: { state: string }) {
  return <span class={`state-badge state-${state.replace(/[^a-z_]/gi, '')}`}>{state}</span>;
}

/** A value as indented JSON in a scrolling block. */
export function JsonBlock({ value, label }: { value: unknown; label: string }) {
  return (
    <pre aria-label={label} tabIndex={0}>
      {value === undefined ? 'none' : JSON.stringify(value, null, 2)}
    </pre>
  );
}

/** A list of facts: label → value (rows whose value is undefined are left out). */
export function Facts({ rows }: { rows: [string, ComponentChildren][] }) {
  return (
    <dl class="facts">
      {rows
        .filter(([, value]) => value !== undefined && value !== null && value !== '')
        .map(([label, value]) => (
          <div key={label}>
            <dt>{label}</dt>
            <dd>{value}</dd>
          </div>
        ))}
    </dl>
  );
}

/** `2026-11-28 04:10:03` in the browser's time zone, or the text as given when not a date. */
export function formatTime(iso: string | null | undefined): string | undefined {
  if (iso === null || iso === undefined) return undefined;
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return iso;
  const pad = (n: number): string => String(n).padStart(2, '0');
  return (
    `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())} ` +
    `${pad(date.getHours())}:${pad(date.getMinutes())}:${pad(date.getSeconds())}`
  );
}

/** `850 ms`, `12.3 s`, `4 min 2 s`. */
export function formatMs(ms: number | null | undefined): string | undefined {
  if (ms === null || ms === undefined) return undefined;
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  return `${Math.floor(ms / 60_000)} min ${Math.round((ms % 60_000) / 1000)} s`;
}

/** Calls `tick` every `ms` while the page is shown (and not while the tab is hidden). */
export function usePolling(tick: () => void, ms: number, active = true): void {
  const saved = useRef(tick);
  saved.current = tick;
  useEffect(() => {
    if (!active) return undefined;
    const timer = setInterval(() => {
      if (document.visibilityState === 'visible') saved.current();
    }, ms);
    return () => clearInterval(timer);
  }, [ms, active]);
}
