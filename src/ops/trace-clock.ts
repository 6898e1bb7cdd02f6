/**
 * One clock per trace (docs/architecture.md "Tracing"). The OpenTelemetry SDK dates each span on
 * its own: its start is `Date.now()` (whole ms) read when it starts, its end that plus the
 * monotonic time it lasted. Two spans of one trace may then be a millisecond or more apart
 * from each other's clock (more when the thread is paused between the two reads), and a span
 * that ended before its root could be shown ending after it. Here a trace's root reads the wall
 * clock once, and every time in the trace (each span's start and end, its events) is that
 * reading plus the monotonic time since: the order of the times is the order of the events.
 */
import type { Attributes, Exception, Link, Span, SpanStatus, TimeInput } from '@opentelemetry/api';

/** A trace's clock: ms since the epoch, with a fraction, monotonic. */
export type TraceClock = () => number;

/** A clock anchored now: the wall clock's reading plus the monotonic time since (ms). */
export function anchoredClock(): TraceClock {
  const epochMs = Date.now();
  const perfMs = performance.now();
  return () => epochMs + (performance.now() - perfMs);
}

/** Whether `value` is one of the API's TimeInput forms (an event's time, not its attributes). */
function isTime(value: unknown): value is TimeInput {
  return typeof value === 'number' || value instanceof Date || Array.isArray(value);
}

/**
 * `span` with `clock` for the times it is not given: its end, its events', its exceptions'.
 * The span itself must have been started at a time of the same clock (`startTime: clock()`).
 * Every other call goes to `span` as it is.
 */
export class AnchoredSpan implements Span {
  constructor(
    private readonly span: Span,
    private readonly clock: TraceClock,
  ) {}

  spanContext() {
    return this.span.spanContext();
  }

  setAttribute(key: string, value: Attributes[string] & {}): this {
    this.span.setAttribute(key, value);
    return this;
  }

  setAttributes(attributes: Attributes): this {
    this.span.setAttributes(attributes);
    return this;
  }

  addEvent(name: string, attributesOrStartTime?: Attributes | TimeInput, startTime?: TimeInput): this {
    if (isTime(attributesOrStartTime)) this.span.addEvent(name, attributesOrStartTime);
    else this.span.addEvent(name, attributesOrStartTime, startTime ?? this.clock());
    return this;
  }

  addLink(link: Link): this {
    this.span.addLink(link);
    return this;
  }

  addLinks(links: Link[]): this {
    this.span.addLinks(links);
    return this;
  }

  setStatus(status: SpanStatus): this {
    this.span.setStatus(status);
    return this;
  }

  updateName(name: string): this {
    this.span.updateName(name);
    return this;
  }

  end(endTime?: TimeInput): void {
    this.span.end(endTime ?? this.clock());
  }

  isRecording(): boolean {
    return this.span.isRecording();
  }

  recordException(exception: Exception, time?: TimeInput): void {
    this.span.recordException(exception, time ?? this.clock());
  }
}
