/** Reading README.md and docs/*.md for the docs tests: files, headings' anchors, links. */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

export const ROOT = join(import.meta.dirname, '..', '..', '..');

export interface MarkdownFile {
  /** Path from the repository root, `/`-separated (`docs/limits.md`). */
  path: string;
  text: string;
}

export function readMarkdown(): MarkdownFile[] {
  const docs = readdirSync(join(ROOT, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .sort()
    .map((name) => `docs/${name}`);
  return ['README.md', ...docs].map((path) => ({
    path,
    text: readFileSync(join(ROOT, path), 'utf8'),
  }));
}

/** The lines outside fenced code blocks, with their 1-based numbers. */
export function proseLines(text: string): { line: string; number: number }[] {
  const out: { line: string; number: number }[] = [];
  let fenced = false;
  text.split('\n').forEach((line, index) => {
    if (line.startsWith('```')) fenced = !fenced;
    else if (!fenced) out.push({ line, number: index + 1 });
  });
  return out;
}

/** GitHub's heading anchor: lower case, punctuation dropped, spaces to hyphens. */
export function anchorOf(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}_\- ]/gu, '')
    .replace(/ /g, '-');
}

/** Every anchor of a file (a repeated heading gets `-1`, `-2`, … as on GitHub). */
export function anchorsOf(text: string): Set<string> {
  const seen = new Map<string, number>();
  const anchors = new Set<string>();
  for (const { line } of proseLines(text)) {
    const match = /^#{1,6} (.*)$/.exec(line);
    if (!match?.[1]) continue;
    const base = anchorOf(match[1]);
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    anchors.add(count === 0 ? base : `${base}-${count}`);
  }
  return anchors;
}

/** Relative Markdown links `[text](target)` outside code: no scheme, no absolute path. */
export function relativeLinks(text: string): { target: string; number: number }[] {
  const out: { target: string; number: number }[] = [];
  for (const { line, number } of proseLines(text)) {
    for (const match of line.matchAll(/\]\(([^)\s]+)\)/g)) {
      const target = match[1] ?? '';
      if (!/^[a-z]+:/i.test(target) && !target.startsWith('/')) out.push({ target, number });
    }
  }
  return out;
}
