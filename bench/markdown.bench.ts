/**
 * Benchmark (issue 39): what Discord's rendering of an answer's Markdown costs
 * (core/markdown/tables.ts `renderTables`: one parse with markdown-it, each table laid out). A
 * streamed answer with a `|` in it is rendered whole at each write (about once a second), so the
 * figure that matters is one render of the text shown, up to `MAX_ANSWER_CHARS` (20,000 by
 * default; 1,000,000 at most). Shapes: prose with three tables, one table of 1,000 rows, a table
 * of 100 columns (a list), long headers on short rows (left as written past the growth bound),
 * pipes alone, and an answer streamed in 20 writes (the sum of its renders, by one TableRenderer
 * as an answer has, and afresh at each write). Reports the median
 * and the worst of the rounds, in ms. Run: `npm run bench:markdown`.
 * Environment: BENCH_ROUNDS (30), BENCH_CHARS (20000).
 */
import { renderTables, TableRenderer } from '../src/core/markdown/tables.ts';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 30);
const CHARS = Number(process.env.BENCH_CHARS ?? 20_000);

/** `unit` repeated to about `CHARS` characters. */
const fill = (unit: string) => unit.repeat(Math.max(1, Math.floor(CHARS / unit.length)));

const table = (rows: number, cols: number, cell: (r: number, c: number) => string) =>
  [
    `| ${Array.from({ length: cols }, (_, c) => `Header ${c}`).join(' | ')} |`,
    `|${'---|'.repeat(cols)}`,
    ...Array.from({ length: rows }, (_, r) => `| ${Array.from({ length: cols }, (_, c) => cell(r, c)).join(' | ')} |`),
  ].join('\n');

const prose = 'Some **bold** prose with a [link](https://example.com) and `code`. '.repeat(4);
const mixed = fill(`${prose}\n\n${table(8, 4, (r, c) => `r${r}c${c}`)}\n\n- a list item\n> a quote\n\n`);
const rowsTable = table(1000, 2, (r) => `row ${r}`);
const SHAPES: Record<string, string> = {
  'prose with tables': mixed,
  '1,000 rows': rowsTable.slice(0, Math.max(CHARS, 1)),
  '100 columns': table(Math.max(1, Math.floor(CHARS / 400)), 100, () => 'x'),
  'long headers, short rows': `| ${'H'.repeat(3000)} | ${'I'.repeat(3000)} |\n|---|---|\n${fill('|a|b|\n')}`,
  'pipes alone': fill('|'),
  'pipe lines': fill('|\n'),
};

function time(run: () => void): { median: number; worst: number } {
  const runs: number[] = [];
  for (let i = 0; i < ROUNDS; i++) {
    const started = performance.now();
    run();
    runs.push(performance.now() - started);
  }
  runs.sort((a, b) => a - b);
  return { median: runs[Math.floor(runs.length / 2)]!, worst: runs.at(-1)! };
}

/** The renders of an answer streamed in 20 writes, as an answer's renderer makes them: each of the whole text so far. */
function streamed(text: string, renderer: { render(markdown: string): string }): void {
  for (let write = 1; write <= 20; write++) renderer.render(text.slice(0, Math.floor((text.length * write) / 20)));
}

console.log(`renderTables, ${ROUNDS} rounds, about ${CHARS.toLocaleString('en-US')} characters a text`);
console.log('| shape | chars | out chars | median ms | worst ms |');
console.log('|---|---|---|---|---|');
for (const [name, text] of Object.entries(SHAPES)) {
  for (let i = 0; i < 3; i++) renderTables(text); // warm-up
  const { median, worst } = time(() => renderTables(text));
  const out = renderTables(text).length;
  console.log(`| ${name} | ${text.length} | ${out} | ${median.toFixed(2)} | ${worst.toFixed(2)} |`);
}
for (const [name, renderer] of [
  ['one renderer (what an answer has)', () => new TableRenderer()],
  ['each write afresh', () => ({ render: (markdown: string) => renderTables(markdown) })],
] as const) {
  const { median, worst } = time(() => streamed(mixed, renderer()));
  console.log(
    `| prose with tables in 20 writes, ${name} | ${mixed.length} | | ${median.toFixed(2)} | ${worst.toFixed(2)} |`,
  );
}
