/**
 * The reply's deferral (Discord's acknowledgement, Slack's "is thinking…") as a streamed
 * answer uses it: started before the history is read and the service asked, awaited once the
 * service's stream is open, so its round trip runs beside theirs.
 */
import type { CommandContext } from '../platform.ts';
import type { Stream } from '../service/stream.ts';

/** A deferral under way: resolves with what it threw (never rejects), or undefined once done. */
export type Deferral = Promise<{ error: unknown } | undefined>;

/**
 * Starts the reply's deferral (Discord's acknowledgement, Slack's "is thinking…") without
 * waiting for it: it goes on while the history is read and the service asked. The first text
 * waits for it anyway (a reply's send awaits it), so its round trip no longer comes before theirs.
 */
export function startDeferral(ctx: CommandContext): Deferral {
  return ctx.reply.defer().then(
    () => undefined,
    (error: unknown) => ({ error }),
  );
}

/**
 * Waits for the deferral once the service's stream is open.
 * @throws what the deferral threw (the interaction is gone: nobody would see the answer), after
 *   cancelling the stream's request.
 */
export async function deferred(deferral: Deferral, stream: Stream<unknown>): Promise<void> {
  const failed = await deferral;
  if (!failed) return;
  stream.abort(failed.error);
  throw failed.error;
}
