/**
 * V8's own account of a process's garbage collection, read from the lines `--trace-gc-nvp`
 * writes to its stdout (one per collection: `[pid:isolate] <ms> ms: pause=… gc=s|mc|… key=value …`),
 * for `bench:streams` with BENCH_GC=1: where a process's CPU goes besides its own code (the
 * bot's extra CPU over the floor's is mostly collection: docs/benchmarks.md).
 */

/** Whether `line` is one of V8's `--trace-gc-nvp` lines. */
export function isGcTraceLine(line: string): boolean {
  return line.startsWith('[') && line.includes(' ms: pause=') && line.includes(' gc=');
}

/** Collections over some window, in ms of CPU (pauses on the main thread, work on V8's helper threads) and MB. */
export interface GcFigures {
  /** Young-generation collections (gc=s). */
  scavenges: number;
  scavengePauseMs: number;
  /** Their parallel work on helper threads (background.scavenge.parallel). */
  scavengeHelpersMs: number;
  /** What the scavenges moved to the old generation (promoted), in MB. */
  promotedMb: number;
  /** Full collections (gc=mc, mark-compact). */
  fullCollections: number;
  fullPauseMs: number;
  /** Their concurrent marking and sweeping on helper threads (background.mark + background.sweep). */
  fullHelpersMs: number;
}

/** The `key=value` fields of one trace line (split on spaces: no pattern that can backtrack). */
function fieldsOf(line: string): Map<string, string> {
  const fields = new Map<string, string>();
  for (const word of line.split(' ')) {
    const at = word.indexOf('=');
    if (at > 0) fields.set(word.slice(0, at), word.slice(at + 1));
  }
  return fields;
}

/** The sums of `lines` (lines that are not V8's trace are skipped). */
export function gcFigures(lines: readonly string[]): GcFigures {
  const f: GcFigures = {
    scavenges: 0,
    scavengePauseMs: 0,
    scavengeHelpersMs: 0,
    promotedMb: 0,
    fullCollections: 0,
    fullPauseMs: 0,
    fullHelpersMs: 0,
  };
  const num = (fields: Map<string, string>, key: string) => Number(fields.get(key) ?? 0) || 0;
  for (const line of lines) {
    if (!isGcTraceLine(line)) continue;
    const fields = fieldsOf(line);
    const kind = fields.get('gc');
    if (kind === 's') {
      f.scavenges++;
      f.scavengePauseMs += num(fields, 'pause');
      f.scavengeHelpersMs += num(fields, 'background.scavenge.parallel');
      f.promotedMb += num(fields, 'promoted') / 1e6;
    } else if (kind === 'mc') {
      f.fullCollections++;
      f.fullPauseMs += num(fields, 'pause');
      f.fullHelpersMs += num(fields, 'background.mark') + num(fields, 'background.sweep');
    }
  }
  return f;
}

/** The collections of `later` that `earlier` (figures of the same lines up to some moment) does not have. */
export function gcSince(later: GcFigures, earlier: GcFigures): GcFigures {
  const out = { ...later };
  for (const key of Object.keys(out) as Array<keyof GcFigures>) out[key] = later[key] - earlier[key];
  return out;
}

/** One line of figures for the bench's output. */
export function gcLine(f: GcFigures): string {
  const ms = (n: number) => Math.round(n);
  const total = f.scavengePauseMs + f.scavengeHelpersMs + f.fullPauseMs + f.fullHelpersMs;
  return (
    `${f.scavenges} scavenges (pauses ${ms(f.scavengePauseMs)} ms, helpers ${ms(f.scavengeHelpersMs)} ms, ` +
    `promoted ${Math.round(f.promotedMb)} MB), ${f.fullCollections} full (pauses ${ms(f.fullPauseMs)} ms, ` +
    `helpers ${ms(f.fullHelpersMs)} ms): ${ms(total)} ms of CPU in all`
  );
}
