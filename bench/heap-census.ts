/**
 * A count of what a process's heap holds at one moment, from a V8 heap snapshot (the file
 * `--heapsnapshot-signal` writes): for `bench:streams` with BENCH_HEAP=1, which signals the bot
 * and the floor 3 s into the 1,000-channel burst. Every full collection marks what the heap
 * holds, and every scavenge copies what survives: the objects an answer keeps while it streams,
 * times a thousand answers, are what the bot's garbage collection costs beyond the floor's
 * (docs/benchmarks.md). Counting them is exact where timings move between runs.
 *
 * Reads V8's snapshot format: `snapshot.meta.node_fields` / `node_types` name the columns of the
 * flat `nodes` array (type, name, self size…), `strings` the names, `edges` the references.
 */
import { readFileSync } from 'node:fs';

/** What one snapshot holds: objects (V8's nodes) and references in all, and the kinds that say most about live state. */
export interface HeapCensus {
  /** Heap objects of every kind (V8's nodes, synthetic roots aside). */
  objects: number;
  /** References between them (V8's edges): what a full collection follows. */
  references: number;
  /** Bytes of the objects themselves (self sizes, not what they retain). */
  bytes: number;
  /** Function objects (closures). */
  closures: number;
  /** V8's ropes (`concatenated string`): one object per part of a string built by `+`. */
  consStrings: number;
  /** Async functions (and generators) suspended at an await: their frames (`Generator` objects). */
  suspendedFunctions: number;
  /** Promises. */
  promises: number;
  /** Function contexts: the variables closures and suspended functions keep. */
  contexts: number;
}

/** The figures of the snapshot at `path`. @throws what reading or parsing the file throws. */
export function heapCensus(path: string): HeapCensus {
  const snapshot = JSON.parse(readFileSync(path, 'utf8')) as {
    snapshot: { meta: { node_fields: string[]; node_types: [string[], ...unknown[]]; edge_fields: string[] } };
    nodes: number[];
    edges: number[];
    strings: string[];
  };
  const { meta } = snapshot.snapshot;
  const width = meta.node_fields.length;
  const typeAt = meta.node_fields.indexOf('type');
  const nameAt = meta.node_fields.indexOf('name');
  const sizeAt = meta.node_fields.indexOf('self_size');
  const types = meta.node_types[0];
  const census: HeapCensus = {
    objects: 0,
    references: snapshot.edges.length / meta.edge_fields.length,
    bytes: 0,
    closures: 0,
    consStrings: 0,
    suspendedFunctions: 0,
    promises: 0,
    contexts: 0,
  };
  const { nodes, strings } = snapshot;
  for (let i = 0; i < nodes.length; i += width) {
    const type = types[nodes[i + typeAt]!];
    if (type === 'synthetic') continue;
    census.objects++;
    census.bytes += nodes[i + sizeAt]!;
    if (type === 'closure') census.closures++;
    else if (type === 'concatenated string') census.consStrings++;
    else if (type === 'object') {
      const name = strings[nodes[i + nameAt]!];
      if (name === 'Generator') census.suspendedFunctions++;
      else if (name === 'Promise') census.promises++;
      else if (name === 'system / Context') census.contexts++;
    }
  }
  return census;
}

/** One line of a census, e.g. `812,345 objects (3.5 M references, 71 MB): 89,687 closures, …`. */
export function censusLine(census: HeapCensus): string {
  const n = (value: number) => value.toLocaleString('en-US');
  return (
    `${n(census.objects)} objects (${(census.references / 1e6).toFixed(2)} M references, ${Math.round(census.bytes / 1e6)} MB): ` +
    `${n(census.closures)} closures, ${n(census.consStrings)} cons strings, ${n(census.suspendedFunctions)} suspended async functions, ` +
    `${n(census.promises)} promises, ${n(census.contexts)} contexts`
  );
}
